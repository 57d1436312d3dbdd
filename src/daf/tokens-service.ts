import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import { prefixedId } from '../db/ids.js';
import { conflict, notFound, precondition, rateLimited } from '../errors/domain-error.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findDonorAccount, type DonorAccountRow } from './donor-accounts-repository.js';
import { dafVerifyFailures } from '../limits/rate-limits.js';
import { approveDonorAccount } from './donor-accounts-service.js';
import type { Cursor } from '../db/keyset.js';
import {
  findToken,
  findTokenByCode,
  insertToken,
  listTokens,
  refundVerifyAttempt,
  reserveVerifyAttempt,
  setTokenStatus,
  type TokenRow,
} from './tokens-repository.js';
import type { DafScope } from './scope.js';
import { tokenStatus } from './views.js';

export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 86_400;
export const MIN_TOKEN_TTL_SECONDS = 60;
export const MAX_TOKEN_TTL_SECONDS = 90 * 86_400;

// Unambiguous characters only (no 0/O, 1/I/L, U): easy to read out and type.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';

/** 12 characters, ~58 bits: guessing is hopeless under the verify rate limit. */
export function generateCode(): string {
  let code = '';
  while (code.length < 12) {
    for (const byte of crypto.randomBytes(16)) {
      if (byte < 240 && code.length < 12) code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
    }
  }
  return code;
}

/** Case-insensitive and tolerant of whitespace and dashes, as the published document says. */
export function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/**
 * How a code is stored: its HMAC under the server's hashing key, "<kid>.<mac>" (a plain hash
 * of a 12-character code could be searched for in a copy of the database).
 */
export function codeHash(keys: KeyedHasher, code: string): string {
  return keys.keyedHash('daf_code', normaliseCode(code));
}

/**
 * Every stored form a live code can have: its HMAC under each hashing key version still live
 * for codes (a code outlives a rotation), and the plain SHA-256 (hex) codes were stored with
 * before the 20261124000100_server_keys migration. That legacy form can go once no code issued
 * before the upgrade can still be pending: MAX_TOKEN_TTL_SECONDS (90 days) after it.
 */
export function codeHashes(keys: KeyedHasher, code: string): string[] {
  const normalised = normaliseCode(code);
  return [...keys.keyedHashes('daf_code', normalised), crypto.createHash('sha256').update(normalised).digest('hex')];
}

type Scope = Omit<DafScope, 'principal'>;

function tokenEvent(scope: Scope, category: 'authorization_token.created' | 'authorization_token.updated', id: string) {
  return {
    environment: scope.environment,
    organizationId: scope.fundProviderId,
    category,
    objectId: id,
    objectType: 'authorization_token' as const,
  };
}

/** A pending token for an account; the code is returned to the caller once and stored hashed. */
export async function issueToken(
  trx: Executor,
  keys: KeyedHasher,
  scope: Scope,
  account: DonorAccountRow,
  options: { expiresIn?: number; metadata?: Record<string, string> } = {},
): Promise<{ row: TokenRow; code: string }> {
  const code = generateCode();
  const ttl = options.expiresIn ?? DEFAULT_TOKEN_TTL_SECONDS;
  const now = new Date();
  const row = await insertToken(trx, {
    created_at: now,
    id: prefixedId('auth_token'),
    environment: scope.environment,
    fund_provider_id: scope.fundProviderId,
    donor_account_id: account.id,
    code_hash: codeHash(keys, code),
    expires_at: new Date(now.getTime() + ttl * 1000),
    metadata: options.metadata,
  });
  await emitEvent(trx, tokenEvent(scope, 'authorization_token.created', row.id));
  return { row, code };
}

export async function createToken(
  db: Db,
  keys: KeyedHasher,
  scope: DafScope,
  donorAccountId: string,
  options: { expiresIn?: number; metadata?: Record<string, string> },
) {
  return inTransaction(db, async (trx) => {
    const account = await findDonorAccount(trx, scope, donorAccountId, true);
    if (!account) throw notFound('The donor account was not found.');
    return issueToken(trx, keys, scope, account, options);
  });
}

/** One of the provider's authorization tokens, or undefined. */
export function tokenOf(db: Db, scope: DafScope, id: string): Promise<TokenRow | undefined> {
  return findToken(db, scope, id);
}

/** A page of a donor account's tokens, newest first; status 'expired' means pending past its expiry. */
export function tokensPage(
  db: Db,
  scope: DafScope,
  donorAccountId: string,
  status: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<TokenRow[]> {
  return listTokens(db, scope, donorAccountId, status, cursor, limit);
}

export async function revokeToken(db: Db, scope: DafScope, id: string): Promise<TokenRow> {
  return inTransaction(db, async (trx) => {
    const row = await findToken(trx, scope, id, true);
    if (!row) throw notFound('The authorization token was not found.');
    const status = tokenStatus(row);
    if (status === 'revoked') return row;
    if (status !== 'pending') throw precondition(`The authorization token is ${status}; only a pending token can be revoked.`);
    const updated = await setTokenStatus(trx, id, 'revoked');
    await emitEvent(trx, tokenEvent(scope, 'authorization_token.updated', id));
    return updated;
  });
}

const invalidCode = () => notFound('The code is invalid or has expired.');

async function redeem(
  trx: Executor,
  scope: Scope,
  token: TokenRow | undefined,
  by: string,
  externalId?: string,
  email?: string,
): Promise<DonorAccountRow> {
  if (!token || tokenStatus(token) !== 'pending') throw invalidCode();
  const account = await findDonorAccount(trx, { ...scope, principal: by }, token.donor_account_id, true);
  if (!account || (email !== undefined && account.email !== email.trim().toLowerCase())) throw invalidCode();
  if (account.status === 'rejected') throw conflict('The donor account has been rejected; it cannot be verified.');
  await setTokenStatus(trx, token.id, 'verified');
  await emitEvent(trx, tokenEvent(scope, 'authorization_token.updated', token.id));
  return approveDonorAccount(trx, scope, account, by, externalId);
}

/**
 * The provider's verify (donor-initiated flow). Unknown, expired, revoked and used codes
 * are one and the same 404, so they cannot be told apart. Guessing is bounded per provider:
 * the attempt is reserved before the code is looked up (so concurrent guesses cannot outrun
 * the count), and past the limit every attempt is 429, a correct code included. Only an
 * attempt that approves the account gives its reservation back, in the same transaction;
 * every refusal (wrong code, rejected account, an error) keeps it.
 */
export async function verifyCode(db: Db, keys: KeyedHasher, scope: DafScope, code: string, externalId?: string): Promise<DonorAccountRow> {
  const reservation = await reserveVerifyAttempt(db, scope, dafVerifyFailures.max, dafVerifyFailures.windowSeconds);
  if (!reservation.reserved) {
    throw rateLimited('Too many failed verification attempts; try again later.', reservation.retryAfterSeconds);
  }
  return inTransaction(db, async (trx) => {
    const account = await redeem(
      trx,
      scope,
      await findTokenByCode(trx, scope.environment, codeHashes(keys, code), scope.fundProviderId),
      'system:authorization_token',
      externalId,
    );
    await refundVerifyAttempt(trx, scope, reservation.windowStart);
    return account;
  });
}

/** The donor side (profile setup, outside this product; `admin daf redeem-code` stands in): the code approves the account. */
export async function redeemCode(
  db: Db,
  keys: KeyedHasher,
  environment: Environment,
  code: string,
  email: string,
): Promise<DonorAccountRow> {
  return inTransaction(db, async (trx) => {
    const token = await findTokenByCode(trx, environment, codeHashes(keys, code));
    const scope = { environment, fundProviderId: token?.fund_provider_id ?? '' };
    return redeem(trx, scope, token, 'system:authorization_token', undefined, email);
  });
}
