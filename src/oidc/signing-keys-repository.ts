import type { Executor } from '../db/executor.js';
import type { Environment, KeyState, SigningKeysTable } from '../db/schema.js';

type Alg = SigningKeysTable['alg'];

/**
 * Queries on signing_keys, the providers' signing keys per environment. keys.ts holds the
 * rules (generation, sealing, the current/next/previous rotation) and calls these.
 */

interface SigningKeyValues {
  environment: Environment;
  kid: string;
  alg: Alg;
  state: KeyState;
  private_jwk: string;
  activated_at?: Date | null;
}

/** Inserts a key; with `ifAbsent`, a key the partial unique indexes refuse is skipped. */
export async function insertSigningKey(db: Executor, values: SigningKeyValues, ifAbsent = false): Promise<void> {
  const insert = db.insertInto('signing_keys').values(values);
  await (ifAbsent ? insert.onConflict((oc) => oc.doNothing()) : insert).execute();
}

/** The current and next keys of every environment (which ones exist, not their material). */
export function listCurrentAndNextKeys(db: Executor) {
  return db.selectFrom('signing_keys').select(['environment', 'alg', 'state']).where('state', 'in', ['current', 'next']).execute();
}

export function listKeysOf(db: Executor, environment: Environment) {
  return db
    .selectFrom('signing_keys')
    .select(['private_jwk', 'state', 'alg', 'retire_after'])
    .where('environment', '=', environment)
    .execute();
}

export function listKeyFingerprints(db: Executor) {
  return db.selectFrom('signing_keys').select(['kid', 'state', 'retire_after']).orderBy('kid').execute();
}

/** Locks every key row for a rotation (inside the caller's transaction). */
export async function lockSigningKeys(db: Executor): Promise<void> {
  await db.selectFrom('signing_keys').select('kid').forUpdate().execute();
}

export async function retireCurrentKey(db: Executor, environment: Environment, alg: Alg, retireAfter: Date): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ state: 'previous', retire_after: retireAfter })
    .where('environment', '=', environment)
    .where('alg', '=', alg)
    .where('state', '=', 'current')
    .execute();
}

/** next → current; returns the promoted kid (throws when there is no next key). */
export async function promoteNextKey(db: Executor, environment: Environment, alg: Alg): Promise<string> {
  const next = await db
    .updateTable('signing_keys')
    .set({ state: 'current', activated_at: new Date() })
    .where('environment', '=', environment)
    .where('alg', '=', alg)
    .where('state', '=', 'next')
    .returning('kid')
    .executeTakeFirstOrThrow();
  return next.kid;
}

export async function deleteRetiredKeys(db: Executor): Promise<void> {
  await db.deleteFrom('signing_keys').where('state', '=', 'previous').where('retire_after', '<', new Date()).execute();
}

export function listKeyStates(db: Executor) {
  return db
    .selectFrom('signing_keys')
    .select(['environment', 'kid', 'alg', 'state', 'retire_after'])
    .orderBy('environment')
    .orderBy('alg')
    .orderBy('state')
    .execute();
}
