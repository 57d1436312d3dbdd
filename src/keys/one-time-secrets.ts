import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import type { SecretBox } from './secret-box.js';
import { saveOneTimeSecret, takeOneTimeSecret } from './one-time-secrets-repository.js';

/**
 * A secret shown once, on the page a form redirects to (post/redirect/get), so that reloading
 * that page never submits the form again (docs/accounts.md, "Organization pages"): the secret
 * is sealed under the secrets key and kept for a few minutes under the SHA-256 of a random
 * single-use id, bound to what the caller names (its purpose and the browser session). The id
 * goes in the redirect's URL; the secret never does. The first read deletes it; another
 * session, a second read or a late one finds nothing.
 */

const ID = /^[A-Za-z0-9_-]{43}$/;
const keyOf = (id: string) => crypto.createHash('sha256').update(id).digest('hex');

export interface OneTimeSecretScope {
  /** What the secret is (e.g. `api_key`). */
  purpose: string;
  /** Who may read it: the browser session and what it acted on. */
  binding: string;
}

/** Keeps `secret` for one display within `seconds`; returns the single-use id to read it by. */
export async function keepForOneDisplay(
  db: Db,
  box: SecretBox,
  scope: OneTimeSecretScope,
  secret: string,
  seconds: number,
): Promise<string> {
  const id = crypto.randomBytes(32).toString('base64url');
  await saveOneTimeSecret(db, { id: keyOf(id), purpose: scope.purpose, binding: scope.binding, sealed: box.seal(secret) }, seconds);
  return id;
}

/** The secret kept under `id` for this scope, taken (never readable again), or undefined. */
export async function takeForDisplay(db: Db, box: SecretBox, scope: OneTimeSecretScope, id: unknown): Promise<string | undefined> {
  if (typeof id !== 'string' || !ID.test(id)) return undefined;
  const sealed = await takeOneTimeSecret(db, keyOf(id), scope.purpose, scope.binding);
  return sealed === undefined ? undefined : box.open(sealed);
}
