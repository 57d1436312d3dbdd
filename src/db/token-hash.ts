import crypto from 'node:crypto';

/**
 * How every bearer secret is stored: SHA-256, base64url. Provider ids (tokens, codes,
 * sessions) and lookups by the resource gateway use this one function.
 */
export function hashId(id: string): string {
  return crypto.createHash('sha256').update(id).digest('base64url');
}
