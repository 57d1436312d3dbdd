import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * The replay_marks table: values a client may present only once (docs/bank-data.md,
 * "Replays"). Claiming is one statement: a new value is inserted; a value already marked and
 * not yet expired conflicts and nothing is returned, so of two processes presenting the same
 * value at the same instant exactly one wins. An expired mark is taken over.
 */
export async function claimMark(db: Executor, environment: Environment, scope: string, key: string, expiresAt: Date): Promise<boolean> {
  const { rows } = await sql<{ key: string }>`
    insert into replay_marks as m (environment, scope, key, expires_at)
    values (${environment}, ${scope}, ${key}, ${expiresAt})
    on conflict (environment, scope, key) do update set expires_at = excluded.expires_at
      where m.expires_at <= now()
    returning key`.execute(db);
  return rows.length === 1;
}

/** Deletes marks that expired; returns how many. */
export async function sweepReplayMarks(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('replay_marks')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
