import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { addressKey } from '../../src/http/client-address.js';
import { LoginThrottle, type Lockout, type Reservation } from '../../src/identity/login-throttle.js';
import { giveBackAttempt, reserveAttempts, sweepThrottleRows } from '../../src/identity/login-throttle-repository.js';
import { ServerKeys, type KeyedHasher } from '../../src/keys/server-keys.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { type LockoutPolicy, signInFailuresPerAccount, signInFailuresPerCallerAddress } from '../../src/limits/rate-limits.js';

let t: TestDatabase;
let keys: ServerKeys;
beforeAll(async () => {
  t = await createTestDatabase();
  keys = await ServerKeys.load(t.db, testBox);
});
afterAll(async () => t?.drop());

// Smaller numbers than production's, so a test runs through several lockouts quickly.
const account: LockoutPolicy = { ...signInFailuresPerAccount, max: 3, baseLockSeconds: 1, maxLockSeconds: 4 };
const address: LockoutPolicy = { ...signInFailuresPerCallerAddress, max: 5, baseLockSeconds: 1, maxLockSeconds: 4 };
const throttle = (addressFailures = address.max) =>
  new LoginThrottle(t.db, { account, address: { ...address, max: addressFailures } }, keys);
/** Stops the clock the throttle reads (it passes Date.now() to its statements) for this test; `advance` moves it on. */
function stopClock() {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  onTestFinished(() => void vi.useRealTimers());
  return { advance: (ms: number) => vi.setSystemTime(Date.now() + ms) };
}
let n = 0;
const fresh = () => ({ email: `user${(n += 1)}@example.org`, ip: `198.51.100.${n}` });

/** One failed sign-in as SignIn makes it (reserve, then fail): the lockout it met, or the one it started. */
async function failOnce(limiter: LoginThrottle, email: string, ip: string): Promise<{ refused?: Lockout; started?: Lockout }> {
  const reserved = await limiter.reserve(email, ip);
  if ('lockout' in reserved) return { refused: reserved.lockout };
  return { started: await limiter.failed(reserved.reservation) };
}

async function reservation(limiter: LoginThrottle, email: string, ip: string): Promise<Reservation> {
  const reserved = await limiter.reserve(email, ip);
  if ('lockout' in reserved) throw new Error(`refused: ${JSON.stringify(reserved.lockout)}`);
  return reserved.reservation;
}

describe('login throttling', () => {
  it('locks an account at the Nth failure, for longer at each lockout, and a success clears it', async () => {
    const clock = stopClock();
    const limiter = throttle(100);
    const { email, ip } = fresh();
    expect(await failOnce(limiter, email, ip)).toEqual({ started: undefined });
    expect(await failOnce(limiter, email, ip)).toEqual({ started: undefined });
    expect(await failOnce(limiter, email, ip)).toEqual({ started: { scope: 'account', retryAfterSeconds: 1 } });
    expect(await limiter.reserve(email, ip)).toEqual({ lockout: { scope: 'account', retryAfterSeconds: 1 } });
    // Another address does not unlock the account.
    expect(await limiter.reserve(email, '203.0.113.9')).toMatchObject({ lockout: { scope: 'account' } });

    // Still locked a moment before the second is over, free once it is.
    clock.advance(999);
    expect(await limiter.reserve(email, ip)).toEqual({ lockout: { scope: 'account', retryAfterSeconds: 1 } });
    clock.advance(1);
    expect(await failOnce(limiter, email, ip)).toEqual({ started: undefined });
    await failOnce(limiter, email, ip);
    expect(await failOnce(limiter, email, ip)).toEqual({ started: { scope: 'account', retryAfterSeconds: 2 } });
    // Each further lockout doubles, up to the maximum (4 s here).
    for (const [waited, next] of [
      [2, 4],
      [4, 4],
    ] as const) {
      clock.advance(waited * 1000);
      await failOnce(limiter, email, ip);
      await failOnce(limiter, email, ip);
      expect(await failOnce(limiter, email, ip)).toEqual({ started: { scope: 'account', retryAfterSeconds: next } });
    }

    clock.advance(4000);
    await limiter.succeeded(await reservation(limiter, email, ip));
    await failOnce(limiter, email, ip);
    await failOnce(limiter, email, ip);
    expect(await failOnce(limiter, email, ip)).toEqual({ started: { scope: 'account', retryAfterSeconds: 1 } });
  });

  it('counts attempts when they are reserved: those in flight spend the budget, and a refused one gives its points back', async () => {
    const limiter = throttle();
    const { email, ip } = fresh();
    // In the order of the numbers they drew (concurrent takes finish in any order): the third
    // holds the budget's last point, so its failure is the one that starts the lockout.
    const inFlight = (await Promise.all([1, 2, 3].map(() => reservation(limiter, email, ip)))).sort(
      (a, b) => a.account.attempt - b.account.attempt,
    );
    // The account's budget is spent by attempts not yet answered: refused, told the lockout they will start.
    expect(await limiter.reserve(email, ip)).toEqual({ lockout: { scope: 'account', retryAfterSeconds: account.baseLockSeconds } });
    // The refused attempt did not keep its point of the address's budget (5): two more fit, not three.
    const others = [await reservation(limiter, fresh().email, ip), await reservation(limiter, fresh().email, ip)];
    expect(await limiter.reserve(fresh().email, ip)).toEqual({ lockout: { scope: 'address', retryAfterSeconds: address.baseLockSeconds } });
    expect(await limiter.failed(inFlight[0]!)).toBeUndefined();
    expect(await limiter.failed(inFlight[1]!)).toBeUndefined();
    expect(await limiter.failed(inFlight[2]!)).toEqual({ scope: 'account', retryAfterSeconds: account.baseLockSeconds });
    // Successes give the address its points back.
    for (const other of others) await limiter.succeeded(other);
    await reservation(limiter, fresh().email, ip);
    await reservation(limiter, fresh().email, ip);
    expect(await limiter.reserve(fresh().email, ip)).toMatchObject({ lockout: { scope: 'address' } });
  });

  it('grants exactly the budget to concurrent reservations', async () => {
    // The address budget out of the way: with both near their limit, the two counters order the
    // concurrent attempts independently, so an attempt within one budget can be refused by the other.
    const limiter = throttle(100);
    const { email, ip } = fresh();
    const answers = await Promise.all(Array.from({ length: 20 }, () => limiter.reserve(email, ip)));
    expect(answers.filter((a) => 'reservation' in a)).toHaveLength(account.max);
    expect(answers.filter((a) => 'lockout' in a)).toHaveLength(20 - account.max);
  });

  it('takes attempts in windows, and gives one back only to the window it was taken from', async () => {
    const key = `account_fail:window-test-${(n += 1)}`;
    /** A point of `key`'s budget, taken as a reservation takes one (the address's budget on a key of its own). */
    const takeAttempt = async () => {
      const rows = (budget: string) => ({ budget, windowMs: 60_000, locks: [] });
      return (await reserveAttempts(t.db, { account: rows(key), address: rows(`${key}-address`) }, Date.now())).account.taken;
    };
    const first = await takeAttempt();
    expect((await takeAttempt()).attempt).toBe(2);
    // A lockout or a success clears the row: a late give-back must not lend the new window a point.
    await t.db.deleteFrom('login_throttle').where('key', '=', key).execute();
    expect((await takeAttempt()).attempt).toBe(1);
    await giveBackAttempt(t.db, key, first);
    const current = await takeAttempt();
    expect(current.attempt).toBe(2);
    await giveBackAttempt(t.db, key, current);
    expect((await takeAttempt()).attempt).toBe(2);
    // An ended window restarts at 1 (and a give-back to it lends the new one nothing).
    const clock = stopClock();
    clock.advance(60_000);
    const renewed = await takeAttempt();
    expect(renewed).toEqual({ attempt: 1, window: String(Date.now() + 60_000) });
    await giveBackAttempt(t.db, key, current);
    expect((await takeAttempt()).attempt).toBe(2);
  });

  it('honours a lockout started under an older key version that is still live, and a success clears every version', async () => {
    const clock = stopClock();
    const { email, ip } = fresh();
    const before = throttle(100);
    for (let i = 0; i < account.max; i += 1) await failOnce(before, email, ip);
    // The hashing key rotated: values hash under a new current version; the old one is still live.
    const rotated = { keyedHash: (purpose: 'login_throttle', value: string) => keys.keyedHash(purpose, `rotated ${value}`) } as KeyedHasher;
    rotated.keyedHashes = (purpose, value) => [rotated.keyedHash(purpose, value), keys.keyedHash(purpose, value)];
    const after = new LoginThrottle(t.db, { account, address: { ...address, max: 100 } }, rotated);
    expect(await after.reserve(email, '203.0.113.77')).toEqual({
      lockout: { scope: 'account', retryAfterSeconds: account.baseLockSeconds },
    });

    clock.advance(account.baseLockSeconds * 1000);
    await after.succeeded(await reservation(after, email, ip));
    const accountRows = await t.db.selectFrom('login_throttle').select('key').where('key', 'like', 'account%').execute();
    const hashes = rotated.keyedHashes('login_throttle', email);
    expect(accountRows.filter((r) => hashes.some((h) => r.key.endsWith(`:${h}`)))).toEqual([]);
  });

  it('finds a lockout that cleared the budget after the reservation began and before it took its point', async () => {
    const limiter = throttle(100);
    const { email, ip } = fresh();
    const hash = keys.keyedHash('login_throttle', email);
    expect(await failOnce(limiter, email, ip)).toEqual({ started: undefined });
    // fail()'s lockout, stretched out: its clear of the budget holds the row while the
    // reservation's statement begins and waits for it; the lock commits meanwhile, then the clear.
    const clear = await t.db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      await conn.deleteFrom('login_throttle').where('key', '=', `account_fail:${hash}`).execute();
      const reserving = limiter.reserve(email, ip);
      await vi.waitFor(
        async () => {
          const waiting = await sql<{
            n: number;
          }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%account_take%'`.execute(
            t.db,
          );
          expect(waiting.rows[0]!.n).toBe(1);
        },
        { timeout: 5000, interval: 10 },
      );
      await t.db
        .insertInto('login_throttle')
        .values({ key: `account_lock:${hash}`, points: 2, expire: Date.now() + 60_000 })
        .execute();
      await sql`commit`.execute(conn);
      return reserving;
    });
    // The statement's snapshot predates the lock, and its point came from the cleared budget.
    expect(clear).toEqual({ lockout: { scope: 'account', retryAfterSeconds: 60 } });
  });

  it('locks an address that fails across many accounts, IPv6 by its /64', async () => {
    const limiter = throttle();
    const ip = '2001:db8:aa:1::1';
    for (let i = 0; i < 4; i += 1)
      expect(await failOnce(limiter, fresh().email, i % 2 ? ip : '2001:db8:aa:1:ffff::2')).toEqual({ started: undefined });
    expect(await failOnce(limiter, fresh().email, ip)).toEqual({ started: { scope: 'address', retryAfterSeconds: 1 } });
    expect(await limiter.reserve(fresh().email, '2001:db8:aa:1::99')).toEqual({ lockout: { scope: 'address', retryAfterSeconds: 1 } });
    const elsewhere = await reservation(limiter, fresh().email, '2001:db8:aa:2::1');
    // A success does not clear the address.
    await limiter.succeeded(elsewhere);
    expect(await limiter.reserve(fresh().email, ip)).toMatchObject({ lockout: { scope: 'address' } });
  });

  it('holds across processes (state is in Postgres) and stores neither addresses nor e-mail addresses', async () => {
    const { email, ip } = fresh();
    const [one, two] = [throttle(), throttle()];
    await failOnce(one, email, ip);
    await failOnce(two, email, ip);
    expect(await failOnce(one, email, ip)).toMatchObject({ started: { scope: 'account' } });
    expect(await two.reserve(email, ip)).toMatchObject({ lockout: { scope: 'account' } });
    const stored = (await t.db.selectFrom('login_throttle').select('key').execute()).map((r) => r.key).join(' ');
    expect(stored).not.toContain('@');
    expect(stored).not.toContain(ip);
    expect(stored).toMatch(/account_lock:[0-9a-f]{12}\.[A-Za-z0-9_-]{43}/);
  });

  it('costs a good sign-in one statement to reserve and one to settle', async () => {
    const probe = new StatementProbe();
    const limiter = new LoginThrottle(t.db.withPlugin(probe), { account, address }, keys);
    const { email, ip } = fresh();
    // A failure first, so the success has an account history to clear and an address count to keep.
    expect(await failOnce(limiter, email, ip)).toEqual({ started: undefined });
    probe.reset();
    const reserved = await reservation(limiter, email, ip);
    expect(probe.statements).toHaveLength(1);
    await limiter.succeeded(reserved);
    expect(probe.statements).toHaveLength(2);

    const rows = await t.db
      .selectFrom('login_throttle')
      .select(['key', 'points'])
      .where('key', 'like', `%:${keys.keyedHash('login_throttle', email)}`)
      .execute();
    expect(rows).toEqual([]);
    const addressFailures = await t.db
      .selectFrom('login_throttle')
      .select('points')
      .where('key', '=', `address_fail:${keys.keyedHash('login_throttle', addressKey(ip))}`)
      .executeTakeFirst();
    expect(addressFailures).toEqual({ points: 1 });
  });

  it('sweeps rows that ended over an hour ago and keeps the rest (the sweeper chore)', async () => {
    const now = Date.now();
    const rows = [
      { key: 'sweep_test:old', points: 3, expire: now - 3600_000 - 1 },
      { key: 'sweep_test:recent', points: 3, expire: now - 60_000 },
      { key: 'sweep_test:live', points: 2, expire: now + 60_000 },
    ];
    await t.db.insertInto('login_throttle').values(rows).execute();
    expect(await sweepThrottleRows(t.db, now)).toBeGreaterThanOrEqual(1);
    const left = await t.db.selectFrom('login_throttle').select('key').where('key', 'like', 'sweep_test:%').orderBy('key').execute();
    expect(left.map((r) => r.key)).toEqual(['sweep_test:live', 'sweep_test:recent']);
  });

  it('keys IPv6 callers by /64 and IPv4 callers by address', () => {
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:0db8:0000:0000:ffff::')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
  });
});
