import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import { runPrepared } from '../db/prepared-statements.js';

/**
 * The login_throttle table (key, points, expire in epoch ms), owned here: every statement the
 * sign-in throttle runs is in this file. A row is live while `expire` is after now (the
 * caller's clock, passed in, so the tests can stop it); an expired row counts as absent and
 * the next take starts a new window over it. Rows are named `<policy>_<kind>:<key>`.
 */
export function rowKey(prefix: string, key: string): string {
  return `${prefix}:${key}`;
}

/** A live row's points and end (epoch ms), or undefined. */
export async function readLiveRow(db: Executor, key: string, now: number): Promise<{ points: number; expire: number } | undefined> {
  const row = await db
    .selectFrom('login_throttle')
    .select(['points', 'expire'])
    .where('key', '=', key)
    .where('expire', '>', String(now))
    .executeTakeFirst();
  return row ? { points: row.points, expire: Number(row.expire) } : undefined;
}

/** Adds one to a counter row in one upsert (an expired row starts a new window of `windowMs`); the count. */
export async function countOne(db: Executor, key: string, now: number, windowMs: number): Promise<number> {
  const [row] = await runPrepared(
    db,
    'login_throttle_count',
    sql<{ points: number }>`${take(now, sql`values (${key}, 1, ${now + windowMs}::bigint)`)}`,
  );
  return row!.points;
}

/** Writes a lock row: points 2 (a lock reads as points > 1) until `until` (epoch ms), replacing any earlier one. */
export async function writeLock(db: Executor, key: string, until: number): Promise<void> {
  await db
    .insertInto('login_throttle')
    .values({ key, points: 2, expire: until })
    .onConflict((oc) => oc.column('key').doUpdateSet({ points: 2, expire: until }))
    .execute();
}

export async function deleteRow(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', key).execute();
}

/** Deletes rows that ended over an hour before `now` (the sweeper's chore); how many. */
export async function sweepThrottleRows(db: Executor, now: number): Promise<number> {
  const result = await db
    .deleteFrom('login_throttle')
    .where('expire', '<', String(now - 3600_000))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** One attempt taken from a budget: its number in the window, and the window it was counted in. */
export interface TakenAttempt {
  attempt: number;
  /** The window's end (epoch ms, as stored): identifies the window, which a delete or an expiry replaces. */
  window: string;
}

/**
 * Gives an attempt back, only to the window it was taken from: after a lockout or a success
 * has cleared the row (or the window has ended), a late give-back must not lend the next
 * window an extra attempt.
 */
export async function giveBackAttempt(db: Db, key: string, taken: TakenAttempt): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set({ points: sql<number>`points - 1` })
    .where('key', '=', key)
    .where('expire', '=', taken.window)
    .where('points', '>', 0)
    .execute();
}

/** One scope's rows for a reservation: its budget (current key) and its lock under every live key version. */
export interface ScopeRows {
  budget: string;
  windowMs: number;
  locks: string[];
}

/** One scope's reservation: the attempt taken, and until when (epoch ms) a lock stops the key, if one does. */
export interface ScopeReserved {
  taken: TakenAttempt;
  lockedUntil: number | undefined;
}

interface ReservedRow {
  account_points: number;
  account_window: string;
  address_points: number;
  address_window: string;
  account_locked_until: string | null;
  address_locked_until: string | null;
  /** True when a budget row that was live when the statement began had been cleared by the time it was taken from. */
  cleared_meanwhile: boolean;
}

/**
 * Counts one attempt under a row, as a statement or a CTE body: one upsert (the row lock
 * serialises concurrent ones, so no two callers see the same number); an expired row starts
 * a new window. It returns the window too, so an attempt can be given back to the window it
 * was taken from.
 */
function take(now: number, source: RawBuilder<unknown>) {
  return sql`insert into login_throttle as t (key, points, expire)
      ${source}
      on conflict (key) do update set
        points = case when t.expire <= ${now}::bigint then 1 else t.points + 1 end,
        expire = case when t.expire <= ${now}::bigint then excluded.expire else t.expire end
      returning points, expire`;
}

/** The latest end of a lock in force among `keys` (points > 1, expire after now). */
function lockedUntil(keys: string[], now: number) {
  return sql`(select max(expire) from login_throttle where key = any(${keys}::text[]) and points > 1 and expire > ${now}::bigint)`;
}

/** A bigint column's epoch milliseconds (read as a string). */
function epochMs(value: string | null): number | undefined {
  return value === null ? undefined : Number(value);
}

/** The window of `budget` that was live when the statement began (its snapshot), if one was. */
function windowBefore(budget: string, now: number) {
  return sql`(select expire from login_throttle where key = ${budget} and expire > ${now}::bigint)`;
}

/**
 * A sign-in's reservation in one statement: a point of the account's budget, then of the
 * address's (the address's insert reads the account's, so every reservation locks the two rows
 * in that order, as settleSuccess does: they cannot deadlock), and both scopes' locks under
 * every live key version.
 *
 * Reading the locks after taking (see LoginThrottle.reserve) holds in one statement thus. Its
 * reads see what was committed when it began; fail() commits the lock before it deletes the
 * budget row, and the take waits for the delete's row lock. A take that gets the row first
 * counts in the window the lockout then clears, as with two statements. A take after the delete
 * starts a new window, and the lock, committed before the delete, is seen, unless the delete
 * committed while this statement ran (waiting for the row): then the statement's snapshot still
 * holds the budget's old live window, not the one taken; `clearedMeanwhile` says so (a success's
 * clear too), and the caller reads the locks again in a statement of its own. (A budget with no
 * live window when the statement began has no lockout to clear short of a whole window of
 * attempts taken, checked and failed while this one statement ran.)
 */
export async function reserveAttempts(
  db: Db,
  rows: { account: ScopeRows; address: ScopeRows },
  now: number,
): Promise<{ account: ScopeReserved; address: ScopeReserved; clearedMeanwhile: boolean }> {
  const { account, address } = rows;
  const [row] = await runPrepared(
    db,
    'login_throttle_reserve',
    sql<ReservedRow>`with
      account_take as (${take(now, sql`values (${account.budget}, 1, ${now + account.windowMs}::bigint)`)}),
      address_take as (${take(now, sql`select ${address.budget}::text, 1, ${now + address.windowMs}::bigint from account_take`)})
    select a.points as account_points, a.expire as account_window, d.points as address_points, d.expire as address_window,
      ${lockedUntil(account.locks, now)} as account_locked_until,
      ${lockedUntil(address.locks, now)} as address_locked_until,
      coalesce(${windowBefore(account.budget, now)} <> a.expire, false) or coalesce(${windowBefore(address.budget, now)} <> d.expire, false) as cleared_meanwhile
    from account_take a cross join address_take d`,
  );
  if (!row) throw new Error('login_throttle reserve returned no row');
  return {
    account: { taken: { attempt: row.account_points, window: String(row.account_window) }, lockedUntil: epochMs(row.account_locked_until) },
    address: { taken: { attempt: row.address_points, window: String(row.address_window) }, lockedUntil: epochMs(row.address_locked_until) },
    clearedMeanwhile: row.cleared_meanwhile,
  };
}

/** Both scopes' locks read again (reserveAttempts' `clearedMeanwhile`): until when each stops its key, if it does. */
export async function readLocks(
  db: Db,
  locks: { account: string[]; address: string[] },
  now: number,
): Promise<{ account: number | undefined; address: number | undefined }> {
  const { rows } = await sql<{
    account: string | null;
    address: string | null;
  }>`select ${lockedUntil(locks.account, now)} as account, ${lockedUntil(locks.address, now)} as address`.execute(db);
  return { account: epochMs(rows[0]?.account ?? null), address: epochMs(rows[0]?.address ?? null) };
}

/**
 * A sign-in succeeded, in one statement: deletes the account's rows (`cleared`: its failures,
 * lockout history and lock under every live key version) and gives the address its point back
 * as giveBackAttempt does. The address row is locked only once the deletes are done (the
 * one-time filter on their count), the order reserveAttempts takes them in.
 */
export async function settleSuccess(db: Executor, cleared: string[], address: { budget: string; taken: TakenAttempt }): Promise<void> {
  await runPrepared(
    db,
    'login_throttle_success',
    sql`with cleared as (delete from login_throttle where key = any(${cleared}::text[]) returning 1)
    update login_throttle set points = points - 1
    where key = ${address.budget} and expire = ${address.taken.window}::bigint and points > 0 and (select count(*) from cleared) >= 0`,
  );
}
