import crypto from 'node:crypto';
import { callerOfLibraryCall, type Caller } from './unit-of-work.js';

/**
 * A client secret verified before the provider runs (middleware/client-secret-check.ts), as the
 * request's caller carries it: the client and a SHA-256 of the secret, never the secret. The
 * provider's own secret check (provider-internals.ts, compareClientSecret) only looks it up, so
 * it is synchronous and answers a plain boolean however the library calls it (docs/oauth.md,
 * "OAuth 2.0 and OpenID Connect", Client authentication).
 */

const digestOf = (secret: string): Buffer => crypto.createHash('sha256').update(secret, 'utf8').digest();

/** Records that `clientId` presented `secret` in this request and that it verified. */
export function recordVerifiedSecret(caller: Caller, clientId: string, secret: string): void {
  caller.verifiedClientSecret = { clientId, digest: digestOf(secret) };
}

/**
 * Whether the request the library is serving verified `presented` for `clientId`: false
 * without a request, without a record, for another client or another secret. Never a Promise.
 */
export function verifiedInThisRequest(clientId: unknown, presented: unknown): boolean {
  const record = callerOfLibraryCall()?.verifiedClientSecret;
  if (!record || typeof clientId !== 'string' || typeof presented !== 'string') return false;
  if (record.clientId !== clientId) return false;
  return crypto.timingSafeEqual(digestOf(presented), record.digest);
}
