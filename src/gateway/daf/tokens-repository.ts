import type { Selectable } from 'kysely';
import type { Executor } from '../../accounts/repository.js';
import type { DonorAuthorizationTokensTable } from '../../db/schema-daf.js';
import { beforeCursor, type Cursor } from '../pagination.js';
import type { DafScope } from './scope.js';

export type TokenRow = Selectable<DonorAuthorizationTokensTable>;
type Scope = Omit<DafScope, 'principal'>;

export function findToken(db: Executor, scope: Scope, id: string, forUpdate = false) {
  let query = db.selectFrom('donor_authorization_tokens').selectAll().where('id', '=', id).where('fund_provider_id', '=', scope.fundProviderId).where('environment', '=', scope.environment);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** By code hash, within one provider (verify) or within the environment (the donor side, which knows no provider). */
export function findTokenByCode(db: Executor, environment: Scope['environment'], codeHash: string, fundProviderId?: string) {
  let query = db.selectFrom('donor_authorization_tokens').selectAll().where('environment', '=', environment).where('code_hash', '=', codeHash);
  if (fundProviderId) query = query.where('fund_provider_id', '=', fundProviderId);
  return query.forUpdate().executeTakeFirst();
}

export function listTokens(db: Executor, scope: Scope, donorAccountId: string, status: string | undefined, cursor: Cursor | undefined, limit: number) {
  let query = db.selectFrom('donor_authorization_tokens').selectAll().where('donor_account_id', '=', donorAccountId).where('fund_provider_id', '=', scope.fundProviderId).where('environment', '=', scope.environment);
  const now = new Date();
  if (status === 'expired') query = query.where('status', '=', 'pending').where('expires_at', '<=', now);
  else if (status === 'pending') query = query.where('status', '=', 'pending').where('expires_at', '>', now);
  else if (status) query = query.where('status', '=', status as 'verified' | 'revoked');
  if (cursor) query = query.where(beforeCursor(cursor));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
}

export function insertToken(db: Executor, values: { id: string; created_at: Date; environment: Scope['environment']; fund_provider_id: string; donor_account_id: string; code_hash: string; expires_at: Date; metadata?: Record<string, string> }) {
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

export async function recentVerifyFailures(db: Executor, scope: Scope, sinceMs: number): Promise<number> {
  const row = await db
    .selectFrom('donor_token_verify_failures')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment)
    .where('failed_at', '>', new Date(Date.now() - sinceMs))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function recordVerifyFailure(db: Executor, scope: Scope): Promise<void> {
  await db.insertInto('donor_token_verify_failures').values({ fund_provider_id: scope.fundProviderId, environment: scope.environment }).execute();
}
