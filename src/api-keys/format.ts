import crypto from 'node:crypto';
import type { Environment } from '../db/schema.js';

/** API keys: alm_live_… (production) or alm_test_… (sandbox) + 32 base62 characters (~190 bits). */
const PREFIX: Record<Environment, string> = { production: 'alm_live_', sandbox: 'alm_test_' };
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(environment: Environment): string {
  let body = '';
  while (body.length < 32) {
    for (const byte of crypto.randomBytes(48)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && body.length < 32) body += ALPHABET[byte % 62];
    }
  }
  return `${PREFIX[environment]}${body}`;
}

export function isApiKeyShaped(value: string): boolean {
  return value.startsWith('alm_live_') || value.startsWith('alm_test_');
}

/** The environment a key's prefix names (undefined for a value that is no key). */
export function apiKeyEnvironment(value: string): Environment | undefined {
  return (Object.keys(PREFIX) as Environment[]).find((environment) => value.startsWith(PREFIX[environment]));
}

/** The prefix of the keys of an environment. */
export function apiKeyPrefix(environment: Environment): string {
  return PREFIX[environment];
}

/** Keys are stored as SHA-256 (hex): high-entropy secrets need no slow hash, and lookups stay one index probe. */
export function apiKeyHash(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}
