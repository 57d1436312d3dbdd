import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ACCOUNT_POLICY, ADDRESS_POLICY, addressKey, LoginThrottle, type LockoutPolicy } from '../../src/interactions/login-throttle.js';
import { ServerKeys } from '../../src/keys/server-keys.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
let keys: ServerKeys;
beforeAll(async () => {
  t = await createTestDatabase();
  keys = await ServerKeys.load(t.db, testBox);
});
afterAll(async () => t?.drop());

// Smaller numbers than production's, so a test runs through several lockouts quickly.
const account: LockoutPolicy = { ...ACCOUNT_POLICY, failures: 3, baseLockSeconds: 1, maxLockSeconds: 4 };
const address: LockoutPolicy = { ...ADDRESS_POLICY, failures: 5, baseLockSeconds: 1, maxLockSeconds: 4 };
const throttle = (addressFailures = address.failures) => new LoginThrottle(t.db, { account, address: { ...address, failures: addressFailures } }, keys);
/** Stops the clock the throttle reads (rate-limiter-flexible reads Date.now()) for this test; `advance` moves it on. */
function stopClock() {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  onTestFinished(() => void vi.useRealTimers());
  return { advance: (ms: number) => vi.setSystemTime(Date.now() + ms) };
}
let n = 0;
const fresh = () => ({ email: `user${(n += 1)}@example.org`, ip: `198.51.100.${n}` });

describe('login throttling', () => {
  it('locks an account at the Nth failure, for longer at each lockout, and a success clears it', async () => {
    const clock = stopClock();
    const limiter = throttle(100);
    const { email, ip } = fresh();
    expect(await limiter.failed(email, ip)).toBeUndefined();
    expect(await limiter.failed(email, ip)).toBeUndefined();
    expect(await limiter.lockedOut(email, ip)).toBeUndefined();
    expect(await limiter.failed(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: 1 });
    expect(await limiter.lockedOut(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: 1 });
    // Another address does not unlock the account.
    expect(await limiter.lockedOut(email, '203.0.113.9')).toMatchObject({ scope: 'account' });

    // Still locked a moment before the second is over, free once it is.
    clock.advance(999);
    expect(await limiter.lockedOut(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: 1 });
    clock.advance(1);
    expect(await limiter.lockedOut(email, ip)).toBeUndefined();
    await limiter.failed(email, ip);
    await limiter.failed(email, ip);
    expect(await limiter.failed(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: 2 });
    // Each further lockout doubles, up to the maximum (4 s here).
    for (const [waited, next] of [[2, 4], [4, 4]] as const) {
      clock.advance(waited * 1000);
      await limiter.failed(email, ip);
      await limiter.failed(email, ip);
      expect(await limiter.failed(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: next });
    }

    await limiter.succeeded(email);
    expect(await limiter.lockedOut(email, ip)).toBeUndefined();
    await limiter.failed(email, ip);
    await limiter.failed(email, ip);
    expect(await limiter.failed(email, ip)).toEqual({ scope: 'account', retryAfterSeconds: 1 });
  });

  it('locks an address that fails across many accounts, IPv6 by its /64', async () => {
    const limiter = throttle();
    const ip = '2001:db8:aa:1::1';
    for (let i = 0; i < 4; i += 1) expect(await limiter.failed(fresh().email, i % 2 ? ip : '2001:db8:aa:1:ffff::2')).toBeUndefined();
    expect(await limiter.failed(fresh().email, ip)).toEqual({ scope: 'address', retryAfterSeconds: 1 });
    expect(await limiter.lockedOut(fresh().email, '2001:db8:aa:1::99')).toEqual({ scope: 'address', retryAfterSeconds: 1 });
    expect(await limiter.lockedOut(fresh().email, '2001:db8:aa:2::1')).toBeUndefined();
    // A success does not clear the address.
    await limiter.succeeded('someone@example.org');
    expect(await limiter.lockedOut(fresh().email, ip)).toMatchObject({ scope: 'address' });
  });

  it('holds across processes (state is in Postgres) and stores neither addresses nor e-mail addresses', async () => {
    const { email, ip } = fresh();
    const [one, two] = [throttle(), throttle()];
    await one.failed(email, ip);
    await two.failed(email, ip);
    expect(await one.failed(email, ip)).toMatchObject({ scope: 'account' });
    expect(await two.lockedOut(email, ip)).toMatchObject({ scope: 'account' });
    const stored = (await t.db.selectFrom('login_throttle').select('key').execute()).map((r) => r.key).join(' ');
    expect(stored).not.toContain('@');
    expect(stored).not.toContain(ip);
    expect(stored).toMatch(/account_fail:[0-9a-f]{12}\.[A-Za-z0-9_-]{43}/);
  });

  it('keys IPv6 callers by /64 and IPv4 callers by address', () => {
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:0db8:0000:0000:ffff::')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
  });
});
