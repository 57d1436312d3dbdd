import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import { addressKey } from '../http/client-address.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import { signInFailuresPerAccount, signInFailuresPerCallerAddress, type LockoutPolicy } from '../limits/rate-limits.js';
import {
  countOne,
  deleteRow,
  giveBackAttempt,
  readLiveRow,
  readLocks,
  reserveAttempts,
  rowKey,
  settleSuccess,
  writeLock,
  type ScopeRows,
  type TakenAttempt,
} from './login-throttle-repository.js';

export type LockoutScope = 'account' | 'address';

/**
 * Keys are HMACs under the server's hashing key ("<kid>.<mac>"): the table never holds an
 * e-mail address or an IP address, nor a plain hash a dictionary of them would find. Failures
 * are counted under the current key; a lockout is honoured under every version still live
 * (a day after a rotation), so a rotation lifts no lockout (it restarts counts short of one).
 */
function keyOf(keys: KeyedHasher, value: string): string {
  return keys.keyedHash('login_throttle', value);
}

function keysOf(keys: KeyedHasher, value: string): string[] {
  return keys.keyedHashes('login_throttle', value);
}

/**
 * Progressive lockout, the `login_throttle` store of the rate limits (LockoutPolicy in
 * src/limits/rate-limits.ts; the numbers are in docs/oauth.md, "Sign-in").
 * One policy's rows in login_throttle, per key: the failure budget (`<name>_fail`), the
 * lockout history (`<name>_lockouts`, how many lockouts in `historySeconds`) and the lock
 * itself (`<name>_lock`, points 2 until it ends).
 */
class ProgressiveLockout {
  constructor(
    private readonly db: Db,
    private readonly policy: LockoutPolicy,
  ) {}

  private budget(key: string): string {
    return rowKey(`${this.policy.name}_fail`, key);
  }

  private history(key: string): string {
    return rowKey(`${this.policy.name}_lockouts`, key);
  }

  private lock(key: string): string {
    return rowKey(`${this.policy.name}_lock`, key);
  }

  /**
   * The rows a reservation touches: the budget under the current key (an attempt is taken from
   * it in one atomic upsert, so concurrent attempts get distinct numbers and at most `max`
   * of them fit in a window; attempts in flight count as failures until they succeed), and the
   * lock under every live key version.
   */
  reservationRows(key: string, liveKeys: string[]): ScopeRows {
    return { budget: this.budget(key), windowMs: this.policy.windowSeconds * 1000, locks: liveKeys.map((k) => this.lock(k)) };
  }

  /** The rows a success clears: failures, lockout history and lock, under each of `liveKeys`. */
  historyRows(liveKeys: string[]): string[] {
    return liveKeys.flatMap((k) => [this.budget(k), this.history(k), this.lock(k)]);
  }

  /** The budget row of `key`. */
  budgetRow(key: string): string {
    return this.budget(key);
  }

  /** Gives a taken attempt back (it was refused after all, or it succeeded). */
  giveBack(key: string, taken: TakenAttempt): Promise<void> {
    return giveBackAttempt(this.db, this.budgetRow(key), taken);
  }

  /** Whether the attempt fits in the budget (the attempt that uses the last point may still run). */
  allows(taken: TakenAttempt): boolean {
    return taken.attempt <= this.policy.max;
  }

  /** Seconds until the key may try again; 0 when it is not locked. */
  async retryAfter(key: string): Promise<number> {
    const now = Date.now();
    const lock = await readLiveRow(this.db, this.lock(key), now);
    return lock && lock.points > 1 ? Math.ceil((lock.expire - now) / 1000) : 0;
  }

  /**
   * Which lockout window a refused attempt met, for counting refusals on one audit row: the
   * end of the lock in force, else of the budget window whose last attempts are starting one.
   */
  async windowOf(key: string): Promise<string> {
    const now = Date.now();
    const lock = await readLiveRow(this.db, this.lock(key), now);
    if (lock && lock.points > 1) return `lock-${lock.expire}`;
    const budget = await readLiveRow(this.db, this.budget(key), now);
    return budget ? `budget-${budget.expire}` : `minute-${Math.floor(now / 60_000)}`;
  }

  /** The lockout's length after `previous` lockouts within the history: doubling, capped. */
  private lockSeconds(previous: number): number {
    return Math.min(this.policy.maxLockSeconds, this.policy.baseLockSeconds * 2 ** Math.min(previous, 20));
  }

  /**
   * How long a caller refused for a spent budget should wait: the lockout in force, or else
   * (the last attempts are still being checked) the length of the lockout they will start.
   */
  async wait(key: string): Promise<number> {
    const locked = await this.retryAfter(key);
    if (locked > 0) return locked;
    return this.lockSeconds((await readLiveRow(this.db, this.history(key), Date.now()))?.points ?? 0);
  }

  /**
   * A taken attempt failed (it stays counted). The one that used the budget's last point
   * starts the lockout; returns the lockout's length, 0 when this failure starts none.
   */
  async fail(key: string, taken: TakenAttempt): Promise<number> {
    if (taken.attempt < this.policy.max) return 0;
    // A success given back while the last attempts were in flight can let two attempts hold
    // the last number: the second finds the lockout begun and does not start another.
    const current = await this.retryAfter(key);
    if (current > 0) return current;
    const now = Date.now();
    const previous = (await countOne(this.db, this.history(key), now, this.policy.historySeconds * 1000)) - 1;
    const seconds = this.lockSeconds(previous);
    // Lock first, then clear the budget: an attempt taken from the cleared budget finds the
    // lock when it looks (reserve reads the lock after taking).
    await writeLock(this.db, this.lock(key), now + seconds * 1000);
    await deleteRow(this.db, this.budget(key));
    return seconds;
  }
}

/** Seconds until a lock ending at `until` (epoch ms) is over, rounded up as retryAfter does; 0 without one. */
function secondsUntil(until: number | undefined, now: number): number {
  return until !== undefined && until > now ? Math.ceil((until - now) / 1000) : 0;
}

export interface Lockout {
  scope: LockoutScope;
  retryAfterSeconds: number;
}

/** The longer of the two scopes' waits (account first on a tie), or undefined when neither applies. */
function longer(account: number, address: number): Lockout | undefined {
  if (account > 0 || address > 0)
    return account >= address ? { scope: 'account', retryAfterSeconds: account } : { scope: 'address', retryAfterSeconds: address };
  return undefined;
}

/** An attempt that holds a point of both budgets: settle it with `failed` or `succeeded`. */
export interface Reservation {
  /** What is throttled: the e-mail address as typed, the caller's address (IPv6 by /64). */
  readonly values: { account: string; address: string };
  /** Their keys under the current version of the hashing key. */
  readonly keys: { account: string; address: string };
  readonly account: TakenAttempt;
  readonly address: TakenAttempt;
}

/** Sign-in throttling in Postgres (table login_throttle), so it holds across processes. */
export class LoginThrottle {
  private readonly account: ProgressiveLockout;
  private readonly address: ProgressiveLockout;

  constructor(
    private readonly db: Db,
    policies: { account: LockoutPolicy; address: LockoutPolicy } = {
      account: signInFailuresPerAccount,
      address: signInFailuresPerCallerAddress,
    },
    private readonly hasher: KeyedHasher,
  ) {
    this.account = new ProgressiveLockout(db, policies.account);
    this.address = new ProgressiveLockout(db, policies.address);
  }

  /**
   * Reserves an attempt for this e-mail address from this caller address, before anything
   * about the password is looked at: a point of the account's and of the address's budget,
   * each taken atomically (under the current key), then the lockouts read under every live
   * key version (a rotation lifts none), in one statement. Refused (a lockout in force, or a
   * budget spent by failures and attempts still in flight): the points are given back and
   * the answer is the lockout; the password must not be checked.
   */
  async reserve(email: string, ip: string): Promise<{ reservation: Reservation } | { lockout: Lockout }> {
    const values = { account: email, address: addressKey(ip) };
    const keys = { account: keyOf(this.hasher, values.account), address: keyOf(this.hasher, values.address) };
    const rows = {
      account: this.account.reservationRows(keys.account, keysOf(this.hasher, values.account)),
      address: this.address.reservationRows(keys.address, keysOf(this.hasher, values.address)),
    };
    let now = Date.now();
    // Read after taking: a lockout that began meanwhile cleared the budget it was taken from
    // (reserveAttempts says how one statement keeps that order, and when it reads again).
    const reserved = await reserveAttempts(this.db, rows, now);
    let locked = { account: reserved.account.lockedUntil, address: reserved.address.lockedUntil };
    if (reserved.clearedMeanwhile) {
      now = Date.now();
      locked = await readLocks(this.db, { account: rows.account.locks, address: rows.address.locks }, now);
    }
    const [account, address] = [reserved.account.taken, reserved.address.taken];
    const accountLock = secondsUntil(locked.account, now);
    const addressLock = secondsUntil(locked.address, now);
    const refuseAccount = accountLock > 0 || !this.account.allows(account);
    const refuseAddress = addressLock > 0 || !this.address.allows(address);
    if (!refuseAccount && !refuseAddress) return { reservation: { values, keys, account, address } };
    await Promise.all([this.account.giveBack(keys.account, account), this.address.giveBack(keys.address, address)]);
    const [accountWait, addressWait] = await Promise.all([
      refuseAccount ? accountLock || this.account.wait(keys.account) : 0,
      refuseAddress ? addressLock || this.address.wait(keys.address) : 0,
    ]);
    return { lockout: longer(accountWait, addressWait)! };
  }

  /**
   * Names the lockout a refused attempt met (reserve answered `lockout`): its scope, the key
   * (a keyed hash, never the address or e-mail) and its window, so refusals of one lockout
   * are counted on one audit row (sign-in.ts).
   */
  async lockoutWindow(email: string, ip: string, scope: LockoutScope): Promise<string> {
    const key = keyOf(this.hasher, scope === 'account' ? email : addressKey(ip));
    return `${scope}:${key}:${await (scope === 'account' ? this.account : this.address).windowOf(key)}`;
  }

  /** The reserved attempt failed; returns the lockout it starts, if it starts one. */
  async failed(reservation: Reservation): Promise<Lockout | undefined> {
    const { keys } = reservation;
    const [account, address] = await Promise.all([
      this.account.fail(keys.account, reservation.account),
      this.address.fail(keys.address, reservation.address),
    ]);
    return longer(account, address);
  }

  /**
   * The reserved attempt succeeded, in one statement: the account's history is cleared (under
   * every key version); the address gets its point back, but keeps its failures (one good
   * password does not vouch for the rest of the traffic from there).
   */
  async succeeded(reservation: Reservation, executor: Executor = this.db): Promise<void> {
    const { keys, values } = reservation;
    await settleSuccess(executor, this.account.historyRows(keysOf(this.hasher, values.account)), {
      budget: this.address.budgetRow(keys.address),
      taken: reservation.address,
    });
  }
}
