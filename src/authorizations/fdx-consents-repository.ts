import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { FdxConsentsTable } from '../db/schema-fdx.js';

/**
 * Queries on fdx_consents (migration 20261128100000_fdx_consents.sql). fdx-consents.ts holds the
 * rules (expiry, status on read, revocation with the authorization) and calls these.
 */

export type FdxConsentRow = Selectable<FdxConsentsTable>;

export function insertConsentRow(db: Executor, values: Insertable<FdxConsentsTable>): Promise<FdxConsentRow> {
  return db.insertInto('fdx_consents').values(values).returningAll().executeTakeFirstOrThrow();
}

export function findConsentRowOfGrant(db: Executor, environment: Environment, grantId: string): Promise<FdxConsentRow | undefined> {
  return db
    .selectFrom('fdx_consents')
    .selectAll()
    .where('environment', '=', environment)
    .where('grant_id', '=', grantId)
    .executeTakeFirst();
}

/** The consents of several authorizations at once (a page of connected applications). */
export async function findConsentRowsOfGrants(
  db: Executor,
  environment: Environment,
  grantIds: readonly string[],
): Promise<FdxConsentRow[]> {
  if (grantIds.length === 0) return [];
  return db
    .selectFrom('fdx_consents')
    .selectAll()
    .where('environment', '=', environment)
    .where('grant_id', 'in', [...grantIds])
    .execute();
}

/** A consent by id, locked until the caller's transaction ends (its activation). */
export function findConsentRowById(db: Executor, environment: Environment, id: string): Promise<FdxConsentRow | undefined> {
  return db
    .selectFrom('fdx_consents')
    .selectAll()
    .where('environment', '=', environment)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Whose consent: its data recipient (client) or its organization; one of them always narrows the lookup. */
export type ConsentOwner = { clientId: string } | { organizationId: string };

export function findConsentRow(
  db: Executor,
  environment: Environment,
  id: string,
  owner: ConsentOwner,
): Promise<FdxConsentRow | undefined> {
  let query = db.selectFrom('fdx_consents').selectAll().where('environment', '=', environment).where('id', '=', id);
  query = 'clientId' in owner ? query.where('client_id', '=', owner.clientId) : query.where('organization_id', '=', owner.organizationId);
  return query.executeTakeFirst();
}

/** The columns of a revocation made now, by whom and why. */
const revokedNow = (reason: string, initiator: string) => ({
  status: 'REVOKED' as const,
  revoked_at: sql<Date>`now()`,
  updated_at: sql<Date>`now()`,
  revocation_reason: reason,
  revocation_initiator: initiator,
});

/** The statuses a consent can still be revoked in: ACTIVE, and PENDING for its organization (not yet its recipient's). */
const LIVE: readonly FdxConsentRow['status'][] = ['PENDING', 'ACTIVE'];

/**
 * Revokes a consent that is still live (ACTIVE; PENDING too for its organization), atomically:
 * concurrent revocations, and one racing the expiry, cannot both win. Undefined when it was not
 * live (or not the owner's).
 */
export function markConsentRevoked(
  db: Executor,
  q: { environment: Environment; id: string; owner: ConsentOwner; reason: string; initiator: string },
): Promise<FdxConsentRow | undefined> {
  let query = db
    .updateTable('fdx_consents')
    .set(revokedNow(q.reason, q.initiator))
    .where('environment', '=', q.environment)
    .where('id', '=', q.id)
    .where('status', 'in', 'clientId' in q.owner ? ['ACTIVE'] : [...LIVE])
    .where('expires_at', '>', sql<Date>`now()`);
  query =
    'clientId' in q.owner ? query.where('client_id', '=', q.owner.clientId) : query.where('organization_id', '=', q.owner.organizationId);
  return query.returningAll().executeTakeFirst();
}

/**
 * Marks every live consent past its expiry EXPIRED (as of its expiry: a PENDING one lapsed
 * then), returning their grants (index fdx_consents_due_idx).
 */
export function markDueConsentsExpired(db: Executor): Promise<{ environment: Environment; grant_id: string }[]> {
  return db
    .updateTable('fdx_consents')
    .set({ status: 'EXPIRED', updated_at: sql`expires_at` })
    .where('status', 'in', [...LIVE])
    .where('expires_at', '<=', sql<Date>`now()`)
    .returning(['environment', 'grant_id'])
    .execute();
}

/** How many of `ids` are deposit accounts of the organization in the environment (ids must be UUIDs). */
export async function countOrganizationAccounts(
  db: Executor,
  environment: Environment,
  organizationId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const row = await db
    .selectFrom('deposit_accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('environment', '=', environment)
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** An account the consent screen offers: what the approver recognises it by. */
export interface ConsentableAccount {
  id: string;
  product_name: string;
  nickname: string | null;
  account_number: string;
  status: string;
}

/** A consented account as the organization's staff recognise it, with whose it is. */
export interface ConsentedAccountRow extends ConsentableAccount {
  organization_id: string;
}

/** The deposit accounts of the environment among `ids` (ids must be UUIDs); an id of a deleted account has no row. */
export async function findAccountsByIds(db: Executor, environment: Environment, ids: readonly string[]): Promise<ConsentedAccountRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('deposit_accounts')
    .select(['id', 'organization_id', 'product_name', 'nickname', 'account_number', 'status'])
    .where('environment', '=', environment)
    .where('id', 'in', [...ids])
    .execute();
}

/** The organization's deposit accounts in the environment, for the consent screen's choice. */
export function listConsentableAccounts(db: Executor, environment: Environment, organizationId: string): Promise<ConsentableAccount[]> {
  return db
    .selectFrom('deposit_accounts')
    .select(['id', 'product_name', 'nickname', 'account_number', 'status'])
    .where('environment', '=', environment)
    .where('organization_id', '=', organizationId)
    .orderBy('product_name')
    .orderBy('id')
    .execute();
}

/**
 * The consent of an authorization revoked for another reason (its approver left the
 * organization, was disabled, a replay, the client removed): REVOKED by the data provider under
 * its business rules, if it was still active. Called with the authorization's revocation, in its
 * transaction.
 */
export async function markConsentOfGrantRevoked(db: Executor, environment: Environment, grantId: string): Promise<void> {
  await db
    .updateTable('fdx_consents')
    .set(revokedNow('BUSINESS_RULE', 'DATA_PROVIDER'))
    .where('environment', '=', environment)
    .where('grant_id', '=', grantId)
    .where('status', 'in', [...LIVE])
    .where('expires_at', '>', sql<Date>`now()`)
    .execute();
}

/** A PENDING consent made ACTIVE until `expiresAt`, its end; undefined when it was not PENDING (nothing changes then). */
export function markConsentActive(db: Executor, environment: Environment, id: string, expiresAt: Date): Promise<FdxConsentRow | undefined> {
  return db
    .updateTable('fdx_consents')
    .set({ status: 'ACTIVE', expires_at: expiresAt, updated_at: sql<Date>`now()` })
    .where('environment', '=', environment)
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Revokes the recipient's other live consents for the organization, ACTIVE or not yet
 * collected (reason BUSINESS_RULE, initiator DATA_PROVIDER: one consent per recipient and
 * organization, the last collected), returning them.
 */
export function markConsentsSuperseded(
  db: Executor,
  q: { environment: Environment; clientId: string; organizationId: string; except: string },
): Promise<FdxConsentRow[]> {
  return db
    .updateTable('fdx_consents')
    .set(revokedNow('BUSINESS_RULE', 'DATA_PROVIDER'))
    .where('environment', '=', q.environment)
    .where('client_id', '=', q.clientId)
    .where('organization_id', '=', q.organizationId)
    .where('status', 'in', [...LIVE])
    .where('expires_at', '>', sql<Date>`now()`)
    .where('id', '<>', q.except)
    .returningAll()
    .execute();
}
