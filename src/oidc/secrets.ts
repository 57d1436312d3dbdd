import crypto from 'node:crypto';
import type { Executor } from '../accounts/repository.js';
import { SecretBox } from '../db/secret-box.js';

/**
 * Server secrets generated once on first start and shared by every process through the
 * database (cookie signing keys, the CSRF key, the client-auth cache key).
 */
export async function getOrCreateSecret(db: Executor, box: SecretBox, name: string, generate: () => string = () => crypto.randomBytes(32).toString('base64url')): Promise<string> {
  await db.insertInto('server_secrets').values({ name, value: box.seal(generate()) }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  // A value stored before encryption at rest is sealed now.
  if (!SecretBox.isSealed(row.value)) await db.updateTable('server_secrets').set({ value: box.seal(row.value) }).where('name', '=', name).execute();
  return box.open(row.value);
}
