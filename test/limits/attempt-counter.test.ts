import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerKeys } from '../../src/keys/server-keys.js';
import { AttemptCounter } from '../../src/limits/attempt-counter.js';
import type { AttemptLimit } from '../../src/limits/rate-limits.js';
import { sweepAttemptCounters } from '../../src/limits/attempt-counter-repository.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
let counter: AttemptCounter;
beforeAll(async () => {
  t = await createTestDatabase();
  counter = new AttemptCounter(t.db, await ServerKeys.load(t.db, testBox));
});
afterAll(async () => t?.drop());

let limits = 0;
const limit = (max: number, windowSeconds = 60): AttemptLimit => ({
  store: 'attempt_counters',
  name: `test_${(limits += 1)}`,
  max,
  windowSeconds,
});

describe('attempt counter', () => {
  it('allows max attempts in a window, then refuses with the time left', async () => {
    const l = limit(3);
    for (let i = 0; i < 3; i += 1) expect((await counter.take(l, 'a@example.org')).allowed).toBe(true);
    const refused = await counter.take(l, 'a@example.org');
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(50);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(60);
    // Another value has a budget of its own.
    expect((await counter.take(l, 'b@example.org')).allowed).toBe(true);
  });

  it('grants exactly max of a concurrent burst (each attempt is counted before any is checked)', async () => {
    const l = limit(5);
    const decisions = await Promise.all(Array.from({ length: 40 }, () => counter.take(l, 'burst@example.org')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
  });

  it('a success gives its attempt back; clear forgets them all', async () => {
    const l = limit(2);
    const first = await counter.take(l, 'x');
    if (!first.allowed) throw new Error('refused');
    await counter.succeeded(first.taken);
    expect((await counter.take(l, 'x')).allowed).toBe(true);
    expect((await counter.take(l, 'x')).allowed).toBe(true);
    expect((await counter.take(l, 'x')).allowed).toBe(false);
    await counter.clear(l, 'x');
    expect((await counter.take(l, 'x')).allowed).toBe(true);
  });

  it('takeAll takes under every limit or under none', async () => {
    const account = limit(1);
    const address = limit(5);
    expect(
      (
        await counter.takeAll([
          { limit: account, value: 'u' },
          { limit: address, value: '192.0.2.1' },
        ])
      ).allowed,
    ).toBe(true);
    // The account's budget is spent: the address's attempt is given back.
    expect(
      (
        await counter.takeAll([
          { limit: account, value: 'u' },
          { limit: address, value: '192.0.2.1' },
        ])
      ).allowed,
    ).toBe(false);
    for (let i = 0; i < 4; i += 1) expect((await counter.take(address, '192.0.2.1')).allowed).toBe(true);
    expect((await counter.take(address, '192.0.2.1')).allowed).toBe(false);
  });

  it('starts a new window once the old one ended, and the sweep removes long-ended windows', async () => {
    const l = limit(1, 1);
    expect((await counter.take(l, 'w')).allowed).toBe(true);
    expect((await counter.take(l, 'w')).allowed).toBe(false);
    await t.db
      .updateTable('attempt_counters')
      .set({ window_ends_at: new Date(Date.now() - 2 * 3600_000) })
      .where('key', 'like', `${l.name}:%`)
      .execute();
    expect(await sweepAttemptCounters(t.db)).toBeGreaterThanOrEqual(1);
    expect((await counter.take(l, 'w')).allowed).toBe(true);
  });

  it('stores no value in clear, only its keyed hash', async () => {
    const l = limit(3);
    await counter.take(l, 'secret-address@example.org');
    const rows = await t.db.selectFrom('attempt_counters').select('key').where('key', 'like', `${l.name}:%`).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).not.toContain('secret-address');
  });
});
