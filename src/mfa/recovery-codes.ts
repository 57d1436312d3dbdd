import crypto from 'node:crypto';

/**
 * Recovery codes: 10 per set, each 80 random bits written as 16 Crockford base32 characters
 * in four groups (`7KQ2-M9XD-4RTA-HV0E`). They are random enough that a plain SHA-256 is
 * what is stored (docs/security.md, "Second factors"); each works once.
 */

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => encode(crypto.randomBytes(10)).match(/.{4}/g)!.join('-'));
}

/**
 * The code as typed, in canonical form: case, spaces and dashes do not matter, and the
 * letters Crockford's alphabet leaves out are read as the digits they look like. Undefined
 * when it cannot be a recovery code.
 */
export function normaliseRecoveryCode(input: string): string | undefined {
  const compact = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  return /^[0-9A-HJKMNP-TV-Z]{16}$/.test(compact) ? compact : undefined;
}

export function hashRecoveryCode(canonical: string): string {
  return crypto.createHash('sha256').update(canonical).digest('hex');
}
