import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/** A stored version of a server key (its value sealed with the secrets key). */
export interface StoredServerKey {
  name: string;
  kid: string;
  value: string;
  activates_at: Date;
}

/** One lock for creating and rotating, so concurrent first starts create one first version each (transaction-scoped). */
export async function lockServerKeys(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('almoner:server_keys'))`.execute(trx);
}

/** The names that have at least one version. */
export async function listServerKeyNames(db: Executor): Promise<string[]> {
  return (await db.selectFrom('server_keys').select('name').distinct().execute()).map((r) => r.name);
}

export async function insertServerKeys(db: Executor, rows: readonly StoredServerKey[]): Promise<void> {
  await db
    .insertInto('server_keys')
    .values([...rows])
    .execute();
}

/** Every version's name, kid and activation (no values): what a rotation decides from. */
export function listServerKeyTimeline(db: Executor) {
  return db.selectFrom('server_keys').select(['name', 'kid', 'activates_at']).execute();
}

export async function deleteServerKey(db: Executor, name: string, kid: string): Promise<void> {
  await db.deleteFrom('server_keys').where('name', '=', name).where('kid', '=', kid).execute();
}

/** Every version with its value, in a stable order (the fingerprint a refresh compares). */
export function listServerKeyVersions(db: Executor): Promise<StoredServerKey[]> {
  return db.selectFrom('server_keys').select(['name', 'kid', 'value', 'activates_at']).orderBy('name').orderBy('kid').execute();
}

export async function updateServerKeyValue(db: Executor, name: string, kid: string, value: string): Promise<void> {
  await db.updateTable('server_keys').set({ value }).where('name', '=', name).where('kid', '=', kid).execute();
}
