import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { DonorAuthorizationTokensTable } from '../db/schema-daf.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { DafScope } from './scope.js';

export type TokenRow = Selectable<DonorAuthorizationTokensTable>;
type Scope = Omit<DafScope, 'principal'>;

export function findToken(db: Executor, scope: Scope, id: string, forUpdate = false) {
  let query = db
    .selectFrom('donor_authorization_tokens')
    .selectAll()
    .where('id', '=', id)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * By any of the code's hashes (one per live hashing key, see codeHashes), within one provider
 * (verify) or within the environment (the donor side, which knows no provider).
 */
export function findTokenByCode(db: Executor, environment: Scope['environment'], codeHashes: readonly string[], fundProviderId?: string) {
  let query = db
    .selectFrom('donor_authorization_tokens')
    .selectAll()
    .where('environment', '=', environment)
    .where('code_hash', 'in', codeHashes);
  if (fundProviderId) query = query.where('fund_provider_id', '=', fundProviderId);
  return query.forUpdate().executeTakeFirst();
}

export function listTokens(
  db: Executor,
  scope: Scope,
  donorAccountId: string,
  status: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('donor_authorization_tokens')
    .selectAll()
    .where('donor_account_id', '=', donorAccountId)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  const now = new Date();
  if (status === 'expired') query = query.where('status', '=', 'pending').where('expires_at', '<=', now);
  else if (status === 'pending') query = query.where('status', '=', 'pending').where('expires_at', '>', now);
  else if (status) query = query.where('status', '=', status as 'verified' | 'revoked');
  return newestFirstPage(query, cursor, limit).execute();
}

export function insertToken(
  db: Executor,
  values: {
    id: string;
    created_at: Date;
    environment: Scope['environment'];
    fund_provider_id: string;
    donor_account_id: string;
    code_hash: string;
    expires_at: Date;
    metadata?: Record<string, string>;
  },
) {
  return db
    .insertInto('donor_authorization_tokens')
    .values({ ...values, metadata: JSON.stringify(values.metadata ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function setTokenStatus(db: Executor, id: string, status: 'verified' | 'revoked') {
  return db
    .updateTable('donor_authorization_tokens')
    .set(status === 'verified' ? { status, verified_at: new Date() } : { status, revoked_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type VerifyReservation = { reserved: true; windowStart: Date } | { reserved: false; retryAfterSeconds: number };

/**
 * Reserves one verify attempt for the provider, or refuses it, in one statement: the upsert
 * locks the provider's counter row, so concurrent attempts are counted one after another and
 * no more than `limit` are ever let through per window. A window starts with its first attempt
 * (database time, to the millisecond, so refundVerifyAttempt can name it exactly).
 */
export async function reserveVerifyAttempt(db: Executor, scope: Scope, limit: number, windowSeconds: number): Promise<VerifyReservation> {
  const over = sql<boolean>`l.window_start <= now() - ${windowSeconds}::int * interval '1 second'`;
  const reserved = await sql<{ window_start: Date }>`
    insert into donor_token_verify_limits as l (fund_provider_id, environment, window_start, attempts)
    values (${scope.fundProviderId}, ${scope.environment}, date_trunc('milliseconds', now()), 1)
    on conflict (fund_provider_id, environment) do update set
      window_start = case when ${over} then date_trunc('milliseconds', now()) else l.window_start end,
      attempts = case when ${over} then 1 else l.attempts + 1 end
    where ${over} or l.attempts < ${limit}
    returning window_start`.execute(db);
  const row = reserved.rows[0];
  if (row) return { reserved: true, windowStart: row.window_start };
  const left = await sql<{ seconds: number }>`
    select ceil(extract(epoch from window_start + ${windowSeconds}::int * interval '1 second' - now()))::int as seconds
    from donor_token_verify_limits where fund_provider_id = ${scope.fundProviderId} and environment = ${scope.environment}`.execute(db);
  return { reserved: false, retryAfterSeconds: Math.max(1, left.rows[0]?.seconds ?? windowSeconds) };
}

/** Gives a reserved attempt back, if its window is still the current one. */
export async function refundVerifyAttempt(db: Executor, scope: Scope, windowStart: Date): Promise<void> {
  await db
    .updateTable('donor_token_verify_limits')
    .set((eb) => ({ attempts: eb('attempts', '-', 1) }))
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment)
    .where('window_start', '=', windowStart)
    .where('attempts', '>', 0)
    .execute();
}
