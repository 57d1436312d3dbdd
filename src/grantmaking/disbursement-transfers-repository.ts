import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { DisbursementTransfersTable, DisbursementTransferStatus, StopReason } from '../db/schema-grantmaking.js';

/**
 * A disbursement's payment attempts (docs/grantmaking.md, "Rails and transfers"), and what the
 * rails read of the directory. The directory's tables are read here rather than through
 * src/directory, which depends on accounts, which provisions grantmakers through this folder.
 */

export function insertTransfer(db: Executor, values: Insertable<DisbursementTransfersTable>) {
  return db.insertInto('disbursement_transfers').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The attempts of `disbursementIds`, oldest first. */
export function transfersOf(db: Executor, disbursementIds: readonly string[]) {
  if (disbursementIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('disbursement_transfers')
    .selectAll()
    .where('disbursement_id', 'in', disbursementIds)
    .orderBy('disbursement_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The latest attempt of a disbursement (the one its status speaks of). */
export function latestTransfer(db: Executor, disbursementId: string) {
  return db
    .selectFrom('disbursement_transfers')
    .selectAll()
    .where('disbursement_id', '=', disbursementId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function updateTransfer(
  db: Executor,
  id: string,
  changes: {
    status: DisbursementTransferStatus;
    completed_at?: Date;
    returned_at?: Date;
    stopped_at?: Date;
    stop_reason?: StopReason;
  },
) {
  return db
    .updateTable('disbursement_transfers')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The next check number: a sequence, so two checks never share one. */
export async function nextCheckNumber(db: Executor): Promise<string> {
  const { rows } = await sql<{ n: string }>`select nextval('disbursement_check_number_seq')::text as n`.execute(db);
  return rows[0]!.n;
}

/** The sandbox rail an organization was onboarded onto (docs/directory.md, "Sandbox onboarding"), if any. */
export async function onboardingSettlementOf(db: Executor, organizationId: string) {
  const row = await db
    .selectFrom('directory_onboardings')
    .select('settlement')
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return row?.settlement;
}

/** The recipient's name and the directory's address. */
export function recipientOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('directory_organizations')
    .select(['id', 'ein', 'name', 'street', 'city', 'state', 'postal_code'])
    .where('id', '=', organizationId)
    .executeTakeFirstOrThrow();
}

/** The newest mailing address the grantmaker suggested for the EIN in the environment. */
export function latestAddressSuggestion(db: Executor, where: { environment: Environment; grantmakerId: string; ein: string }) {
  return db
    .selectFrom('nonprofit_address_suggestions')
    .select(['line1', 'line2', 'city', 'state', 'zip'])
    .where('environment', '=', where.environment)
    .where('grantmaker_id', '=', where.grantmakerId)
    .where('ein', '=', where.ein)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function organizationNameOf(db: Executor, organizationId: string): Promise<string> {
  const row = await db.selectFrom('organizations').select('name').where('id', '=', organizationId).executeTakeFirstOrThrow();
  return row.name;
}
