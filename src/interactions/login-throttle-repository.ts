import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../db/database.js';

/** The table the migration 20261122000300_login_throttle creates. */
export const THROTTLE_TABLE = 'login_throttle';

interface PgQuery {
  text: string;
  values?: unknown[];
}

/**
 * rate-limiter-flexible's RateLimiterPostgres talks to a `pg` pool (`query({text, values})`
 * → `{rows, rowCount}`). This gives it one over our Kysely instance, so the limiter shares
 * the application's pool, statement timeout and outage handling instead of opening its own.
 * The limiter writes only the login_throttle table, whose SQL it owns, except the failure
 * budgets' take and give-back below (same layout and window rule).
 */
export function throttleStoreClient(db: Db) {
  return {
    async query(q: PgQuery) {
      const result = await db.executeQuery(CompiledQuery.raw(q.text, q.values ?? []));
      const rows = result.rows as Record<string, unknown>[];
      return { rows, rowCount: rows.length > 0 ? rows.length : Number(result.numAffectedRows ?? 0) };
    },
  };
}

/** One attempt taken from a budget: its number in the window, and the window it was counted in. */
export interface TakenAttempt {
  attempt: number;
  /** The window's end (epoch ms, as stored): identifies the window, which a delete or an expiry replaces. */
  window: string;
}

/**
 * Counts one attempt under `rowKey` in a single upsert (the row lock serialises concurrent
 * ones, so no two callers see the same number), with rate-limiter-flexible's window rule:
 * an expired row starts a new window of `windowMs`. It returns the window too, which the
 * library's consume does not, so an attempt can be given back to the window it was taken from.
 */
export async function takeAttempt(db: Db, rowKey: string, windowMs: number): Promise<TakenAttempt> {
  const now = Date.now();
  const row = await db
    .insertInto('login_throttle')
    .values({ key: rowKey, points: 1, expire: now + windowMs })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        points: sql<number>`case when login_throttle.expire <= ${now} then 1 else login_throttle.points + 1 end`,
        expire: sql<number>`case when login_throttle.expire <= ${now} then ${now + windowMs} else login_throttle.expire end`,
      }),
    )
    .returning(['points', 'expire'])
    .executeTakeFirstOrThrow();
  return { attempt: row.points, window: String(row.expire) };
}

/**
 * Gives an attempt back, only to the window it was taken from: after a lockout or a success
 * has cleared the row (or the window has ended), a late give-back must not lend the next
 * window an extra attempt.
 */
export async function giveBackAttempt(db: Db, rowKey: string, taken: TakenAttempt): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set({ points: sql<number>`points - 1` })
    .where('key', '=', rowKey)
    .where('expire', '=', taken.window)
    .where('points', '>', 0)
    .execute();
}
