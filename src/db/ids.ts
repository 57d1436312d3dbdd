import crypto from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** A ULID-shaped id (time-ordered, 26 Crockford base32 characters), as the published examples use. */
export function ulid(time: number = Date.now()): string {
  let out = '';
  let t = time;
  for (let i = 0; i < 10; i += 1) {
    out = CROCKFORD[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  for (const byte of crypto.randomBytes(16)) out += CROCKFORD[byte % 32];
  return out;
}

/** `<prefix>_<ulid>`, e.g. donor_account_01jpjenf5q6cawy43yxfcrxhct. */
export function prefixedId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
