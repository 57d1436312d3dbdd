import crypto from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { ClientSecretCache } from '../../src/oidc/client-secret-cache.js';
import { hashClientSecret } from '../../src/oidc/clients/service.js';
import { clientSecretFailuresPerCallerAddress } from '../../src/limits/rate-limits.js';

/** The cache's time rules, on the test clock (vitest's fake Date): no waiting. */

const SECRET = 'the-right-secret';
let hash: string;
let cache: ClientSecretCache;
const start = Date.UTC(2027, 0, 1);

beforeEach(async () => {
  hash ??= await hashClientSecret(SECRET, MIN_PASSWORD_PARAMS);
  cache = new ClientSecretCache(crypto.randomBytes(32), 60_000);
  vi.useFakeTimers({ toFake: ['Date'], now: start });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('client secret cache', () => {
  it('answers a verified secret from memory for the TTL, then checks it again', async () => {
    expect(await cache.verify('client', hash, SECRET)).toBe(true);
    vi.setSystemTime(start + 59_999);
    expect(await cache.verify('client', hash, SECRET)).toBe(true);
    expect(cache.argon2Runs).toBe(1);
    vi.setSystemTime(start + 60_000);
    expect(await cache.verify('client', hash, SECRET)).toBe(true);
    expect(cache.argon2Runs).toBe(2);
  });

  it('ends an entry when the clock is stepped back, instead of stretching it', async () => {
    expect(await cache.verify('client', hash, SECRET)).toBe(true);
    vi.setSystemTime(start - 1_000);
    expect(await cache.verify('client', hash, SECRET)).toBe(true);
    expect(cache.argon2Runs).toBe(2);
  });

  it('stops running argon2 past the failure limit until the window has passed (or the clock stepped back)', async () => {
    for (let i = 0; i < clientSecretFailuresPerCallerAddress.max; i += 1)
      expect(await cache.verify('client', hash, 'wrong', '192.0.2.1')).toBe(false);
    expect(cache.argon2Runs).toBe(clientSecretFailuresPerCallerAddress.max);
    expect(await cache.verify('client', hash, SECRET, '192.0.2.1')).toBe(false);
    expect(cache.argon2Runs, 'limited: not even the right secret is checked').toBe(clientSecretFailuresPerCallerAddress.max);
    vi.setSystemTime(start + clientSecretFailuresPerCallerAddress.windowSeconds * 1000);
    expect(await cache.verify('client', hash, SECRET, '192.0.2.1')).toBe(true);
    expect(cache.argon2Runs).toBe(clientSecretFailuresPerCallerAddress.max + 1);

    for (let i = 0; i < clientSecretFailuresPerCallerAddress.max; i += 1) await cache.verify('other', hash, 'wrong', '192.0.2.1');
    expect(await cache.verify('other', hash, SECRET, '192.0.2.1')).toBe(false);
    vi.setSystemTime(start);
    expect(await cache.verify('other', hash, SECRET, '192.0.2.1')).toBe(true);
  });

  it('keeps the failure records bounded by evicting the least recently used, not all of them', async () => {
    const small = new ClientSecretCache(crypto.randomBytes(32), 60_000, 3);
    const limit = async (source: string) => {
      for (let i = 0; i < clientSecretFailuresPerCallerAddress.max; i += 1) await small.verify('client', hash, `wrong-${i}`, source);
    };
    await limit('192.0.2.1');
    await small.verify('client', hash, 'wrong', '192.0.2.2');
    await small.verify('client', hash, 'wrong', '192.0.2.3');
    // Refused at the limit; that use makes 192.0.2.1 the most recently used record.
    expect(await small.verify('client', hash, SECRET, '192.0.2.1')).toBe(false);
    const runs = small.argon2Runs;
    // A fourth address evicts the least recently used record (192.0.2.2), not everything.
    await small.verify('client', hash, 'wrong', '192.0.2.4');
    expect(await small.verify('client', hash, SECRET, '192.0.2.1')).toBe(false);
    expect(small.argon2Runs).toBe(runs + 1);
  });
});
