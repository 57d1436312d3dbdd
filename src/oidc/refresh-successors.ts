import crypto from 'node:crypto';
import type { Environment } from '../db/schema.js';

/**
 * refresh_reuse_grace_seconds (docs/security.md, "Refresh token replay inside the grace
 * window"): the pair a refresh answered with is kept, sealed, for a duplicate of that refresh
 * inside the window. It is encrypted under a key derived from the presented refresh token and
 * bound to the client it was issued to, so the table alone reveals nothing. The token endpoint
 * seals it into the request's unit of work, which commits it with the rotation
 * (unit-of-work-repository.ts), and opens it for a duplicate (middleware/refresh-grace.ts).
 */

/** A KeyObject, not a Buffer: Node 24's cipher setup tests a Buffer key's kind by throwing and catching a native exception, twice the cost of the seal. */
export function successorKey(refreshToken: string, environment: Environment): crypto.KeyObject {
  return crypto.createSecretKey(new Uint8Array(crypto.hkdfSync('sha256', refreshToken, environment, 'almoner refresh successor', 32)));
}

/** AES-256-GCM; the client id is additional data, so the pair opens only for that client. */
export function sealSuccessor(plaintext: string, key: crypto.KeyObject, clientId: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(clientId, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

export function openSuccessor(sealed: string, key: crypto.KeyObject, clientId: string): string | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(clientId, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Whether a refresh token was consumed within the grace window (the replay handler asks this too). */
export function withinGrace(consumedAt: Date | null | undefined, graceSeconds: number): boolean {
  return graceSeconds > 0 && consumedAt instanceof Date && Date.now() - consumedAt.getTime() <= graceSeconds * 1000;
}
