import { AsyncLocalStorage } from 'node:async_hooks';
import type { StoredRow } from '../db/provider-store.js';
import type { AuditEvent } from '../audit/audit-log.js';
import type { AuthorizationContext } from './authorizations.js';

/**
 * One token request as one unit of work. oidc-provider reads and writes its models one call at
 * a time (client, token, Grant, account, consume, access token, refresh token, audit: ten
 * round trips and five commits per refresh). Inside the token endpoint the adapter instead
 *  - reads the presented code or refresh token together with its Grant and our authorization
 *    row in one query, and answers the provider's later reads of those from this unit;
 *  - defers the consume and the new tokens, which the endpoint middleware (tokenUnit) writes
 *    in one statement once the provider has built a successful response: the conditional
 *    consume, the inserts, the audit row and last_used_at commit together or not at all, so a
 *    request that loses the race to consume writes nothing and is answered invalid_grant.
 * This file is the unit and its scope; the read is token-prefetch.ts, the statements
 * token-unit-repository.ts, the endpoint middleware middleware/token-endpoint-unit.ts.
 */

export interface PendingRow {
  model: string;
  id: string; // hashed
  payload: string;
  grantId: string | null;
  uid: string | null;
  expiresAt: Date | null;
}

export class TokenUnit {
  /** Rows read in this request, by `${model}:${hashed id}`; null when absent. */
  readonly rows = new Map<string, StoredRow | null>();
  /** Authorizations read with their token, by grant id; null when absent. */
  readonly authorizations = new Map<string, AuthorizationContext | null>();
  consume: { model: string; id: string } | undefined;
  readonly inserts: PendingRow[] = [];
  readonly audits: AuditEvent[] = [];
  /** Run once the response's tokens are stored: never for a request that lost its race. */
  readonly afterCommit: (() => void)[] = [];
  usedGrantId: string | undefined;

  get hasWrites(): boolean {
    return this.consume !== undefined || this.inserts.length > 0;
  }
}

const storage = new AsyncLocalStorage<TokenUnit>();

export function currentTokenUnit(): TokenUnit | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` once the current token response is committed (at once outside a token request).
 * oidc-provider announces grant.success before the unit writes; anything that counts issued
 * tokens waits for the write, so a request that then loses its consume race is not counted.
 */
export function whenTokensCommitted(fn: () => void): void {
  const unit = storage.getStore();
  if (unit) unit.afterCommit.push(fn);
  else fn();
}

export function runInTokenUnit<T>(unit: TokenUnit, fn: () => Promise<T>): Promise<T> {
  return storage.run(unit, fn);
}
