import crypto from 'node:crypto';
import type { Environment } from '../db/schema.js';
import type { ServerKeys } from '../keys/server-keys.js';

/**
 * The provider's cookie keys as a live keygrip: `cookies` (the library Koa uses) signs with
 * `sign` and checks with `index`, so giving it this instead of a fixed array makes a rotation
 * (and a version aging out) take effect at the next request, without rebuilding the provider.
 * Signatures are keygrip's own (HMAC-SHA1 of `name=value` keyed with the key's text,
 * base64url), so cookies signed before versions existed still verify.
 *
 * `index` answers 0 for a match under any live version: for a later index `cookies` would
 * re-set the signature cookie with its default attributes (no Secure, no SameSite). A cookie
 * signed with an older version is instead re-signed when the provider next sets it, which it
 * does whenever it saves the session (every authorization request), extending it; a session
 * last saved before the new version activated ends within SESSION_TTL of that, so before the
 * older version stops verifying.
 */
export interface Keygrip {
  sign(data: string): string;
  verify(data: string, digest: string): boolean;
  index(data: string, digest: string): number;
}

function sign(data: string, key: string): string {
  return crypto.createHmac('sha1', key).update(data).digest('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/** A class, not a plain object, so the provider's configuration keeps this very instance (it copies plain objects). */
class LiveKeygrip implements Keygrip {
  constructor(
    private readonly keys: ServerKeys,
    private readonly name: `cookie_key:${Environment}`,
  ) {}

  sign(data: string): string {
    return sign(data, this.keys.signing(this.name).secret);
  }

  index(data: string, digest: string): number {
    if (typeof digest !== 'string') return -1;
    return this.keys.verifying(this.name).some((version) => same(sign(data, version.secret), digest)) ? 0 : -1;
  }

  verify(data: string, digest: string): boolean {
    return this.index(data, digest) >= 0;
  }
}

export function cookieKeygrip(keys: ServerKeys, environment: Environment): Keygrip {
  return new LiveKeygrip(keys, `cookie_key:${environment}`);
}
