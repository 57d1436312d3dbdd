import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Trx } from '../db/executor.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { VerificationRequestsTable, VerificationStatus } from '../db/schema-directory.js';

/** The verification requests' queries (docs/directory.md, "Verification requests"). */

export type VerificationRequestRow = Selectable<VerificationRequestsTable>;

export interface GrantmakerScope {
  environment: Environment;
  grantmakerId: string;
}

export async function insertVerificationRequest(trx: Trx, values: Insertable<VerificationRequestsTable>): Promise<VerificationRequestRow> {
  return trx.insertInto('verification_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Serialises the requests for one EIN until the transaction ends, so two first requests for a new
 * EIN (two grantmakers at once) cannot draw two Organization ids.
 */
export async function lockEin(trx: Trx, ein: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`verification_request:${ein}`}, 0))`.execute(trx);
}

/** The Organization id an earlier request for this EIN named, so all requests for it name one. */
export async function organizationIdRequestedFor(ex: Executor, ein: string): Promise<string | undefined> {
  const row = await ex
    .selectFrom('verification_requests')
    .select('organization_id')
    .where('ein', '=', ein)
    .orderBy('created_at')
    .executeTakeFirst();
  return row?.organization_id;
}

export function findVerificationRequest(ex: Executor, scope: GrantmakerScope, id: string) {
  return ex
    .selectFrom('verification_requests')
    .selectAll()
    .where('id', '=', id)
    .where('grantmaker_id', '=', scope.grantmakerId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listVerificationRequests(
  ex: Executor,
  scope: GrantmakerScope,
  ein: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<VerificationRequestRow[]> {
  let query = ex
    .selectFrom('verification_requests')
    .selectAll()
    .where('grantmaker_id', '=', scope.grantmakerId)
    .where('environment', '=', scope.environment);
  if (ein !== undefined) query = query.where('ein', '=', ein);
  return newestFirstPage(query, cursor, limit).execute();
}

/** Any grantmaker's request by id, locked for its decision (the admin command's). */
export function lockVerificationRequest(trx: Trx, id: string) {
  return trx.selectFrom('verification_requests').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function decideVerificationRequest(trx: Trx, id: string, status: Exclude<VerificationStatus, 'needs_review'>) {
  const now = new Date();
  return trx
    .updateTable('verification_requests')
    .set({ status, updated_at: now, ...(status === 'verified' ? { verified_at: now } : { failed_at: now }) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Lists a verified request's organization in the directory under the id the request named, unless
 * the EIN is there already (imported since): the request then names the listed organization.
 */
export async function listVerifiedOrganization(trx: Trx, row: VerificationRequestRow): Promise<VerificationRequestRow> {
  await trx
    .insertInto('directory_organizations')
    .values({
      id: row.organization_id,
      ein: row.ein,
      name: row.organization_name,
      street: row.mailing_line2 ? `${row.mailing_line1} ${row.mailing_line2}` : row.mailing_line1,
      city: row.mailing_city,
      state: row.mailing_state,
      postal_code: row.mailing_zip_code,
      source: 'verification_request',
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const listed = await trx.selectFrom('directory_organizations').select('id').where('ein', '=', row.ein).executeTakeFirstOrThrow();
  if (listed.id === row.organization_id) return row;
  return trx
    .updateTable('verification_requests')
    .set({ organization_id: listed.id })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
