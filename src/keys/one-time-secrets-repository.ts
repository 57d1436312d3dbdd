import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { OneTimeSecretsTable } from '../db/schema.js';

/** Keeps a sealed secret for `seconds`, clearing expired ones on the way (the chores' sweep clears the rest). */
export async function saveOneTimeSecret(db: Executor, row: Omit<OneTimeSecretsTable, 'expires_at'>, seconds: number): Promise<void> {
  await deleteExpiredOneTimeSecrets(db);
  await db
    .insertInto('one_time_secrets')
    .values({ ...row, expires_at: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .execute();
}

/** Takes the secret kept under `id` for `purpose` and `binding`: deleted as it is read, so it is shown once. */
export async function takeOneTimeSecret(db: Executor, id: string, purpose: string, binding: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('one_time_secrets')
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .where('binding', '=', binding)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('sealed')
    .executeTakeFirst();
  return row?.sealed;
}

export async function deleteExpiredOneTimeSecrets(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('one_time_secrets')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
