import crypto from 'node:crypto';
import type { Environment } from '../db/schema.js';
import type { ServerKeys } from '../keys/server-keys.js';

/**
 * The provider's cookie keys as a live keygrip: `cookies` (the library Koa uses) signs with
 * `sign` and checks with `index`, so giving it this instead of a fixed array makes a rotation
 * (and a version aging out) take effect at the next request, without rebuilding the provider.
 * Signatures are keygrip's own (HMAC-SHA1 of `name=value` keyed with the key's text,
 * base64url), so cookies signed before versions existed still verify. A cookie that verifies
 * under an older version is re-signed with the current one by `cookies` itself (index > 0).
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
    return this.keys.verifying(this.name).findIndex((version) => same(sign(data, version.secret), digest));
  }

  verify(data: string, digest: string): boolean {
    return this.index(data, digest) >= 0;
  }
}

export function cookieKeygrip(keys: ServerKeys, environment: Environment): Keygrip {
  return new LiveKeygrip(keys, `cookie_key:${environment}`);
}
