import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/**
 * The attempt_counters table: fixed windows, one row per guarded key. Taking an attempt is one
 * upsert, so concurrent attempts on a key serialise on its row and each gets its own number.
 */

/** Counts one attempt on `key` (a new window when there is none or it ended); returns its number and the window's end. */
export async function takeAttempt(db: Executor, key: string, windowSeconds: number): Promise<{ count: number; windowEndsAt: Date }> {
  const { rows } = await sql<{ count: number; window_ends_at: Date }>`
    insert into attempt_counters as c (key, count, window_ends_at)
    values (${key}, 1, now() + make_interval(secs => ${windowSeconds}))
    on conflict (key) do update set
      count = case when c.window_ends_at <= now() then 1 else c.count + 1 end,
      window_ends_at = case when c.window_ends_at <= now() then excluded.window_ends_at else c.window_ends_at end
    returning count, window_ends_at`.execute(db);
  const row = rows[0]!;
  return { count: row.count, windowEndsAt: row.window_ends_at };
}

/** Gives one attempt back to the key's current window (an attempt that succeeded). */
export async function giveBackAttempt(db: Executor, key: string): Promise<void> {
  await db
    .updateTable('attempt_counters')
    .set((eb) => ({ count: sql<number>`greatest(${eb.ref('count')} - 1, 0)` }))
    .where('key', '=', key)
    .where('window_ends_at', '>', sql<Date>`now()`)
    .execute();
}

/** Forgets the key's attempts (its window ends now). */
export async function clearAttempts(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('attempt_counters').where('key', '=', key).execute();
}

/** Deletes the rows of windows that ended more than an hour ago; returns how many. */
export async function sweepAttemptCounters(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('attempt_counters')
    .where('window_ends_at', '<', sql<Date>`now() - interval '1 hour'`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
