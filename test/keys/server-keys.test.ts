import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  rotateServerKeys,
  SERVER_KEY_ACTIVATION_SECONDS,
  ServerKeys,
  VERIFIES_AFTER_RETIREMENT_SECONDS,
} from '../../src/keys/server-keys.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());
afterEach(() => {
  vi.useRealTimers();
});

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('server key versions', () => {
  it('a first start creates one version of each key; concurrent starts create no more', async () => {
    await Promise.all([ServerKeys.load(t.db, testBox), ServerKeys.load(t.db, testBox), ServerKeys.load(t.db, testBox)]);
    const rows = await t.db.selectFrom('server_keys').select(['name', 'kid', 'value']).execute();
    expect(rows.map((r) => r.name).sort()).toEqual([
      'client_secret_cache_key',
      'cookie_key:production',
      'cookie_key:sandbox',
      'csrf_key',
      'hashing_key',
    ]);
    for (const row of rows) expect(row.value.startsWith('enc:v1:')).toBe(true);
  });

  it('sign from their activation, verify before it, and age out per purpose', async () => {
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const keys = await ServerKeys.load(t.db, testBox);
    const first = keys.signing('csrf_key').kid;
    const firstHashing = keys.signing('hashing_key').kid;
    const rotation = await rotateServerKeys(t.db, testBox);
    const second = rotation.rotated.find((k) => k.name === 'csrf_key')!.kid;
    expect(await keys.refresh()).toBe(true);
    expect(await keys.refresh()).toBe(false);
    const activation = start + SERVER_KEY_ACTIVATION_SECONDS * 1000;
    expect(Date.parse(rotation.activates_at)).toBe(activation);

    // Before the activation: the first version signs, the pending one already verifies.
    expect(keys.signing('csrf_key').kid).toBe(first);
    expect(keys.verifying('csrf_key').map((v) => v.kid)).toEqual([first, second]);
    expect(rotation.keys.find((k) => k.kid === second)).toMatchObject({ state: 'pending', verifies_until: null });

    // After: the new one signs, the old one verifies until its life after retirement has passed.
    vi.setSystemTime(activation);
    expect(keys.signing('csrf_key').kid).toBe(second);
    expect(keys.verifying('csrf_key').map((v) => v.kid)).toEqual([second, first]);
    vi.setSystemTime(activation + VERIFIES_AFTER_RETIREMENT_SECONDS.csrf_key * 1000 - 1);
    expect(keys.verifying('csrf_key').map((v) => v.kid)).toEqual([second, first]);
    vi.setSystemTime(activation + VERIFIES_AFTER_RETIREMENT_SECONDS.csrf_key * 1000);
    expect(keys.verifying('csrf_key').map((v) => v.kid)).toEqual([second]);

    // The hashing key: a value hashed before the rotation is found for a day by the throttle,
    // for 90 days by code lookups, and for good by audit checks.
    vi.setSystemTime(activation + 2 * DAY);
    const kidsFor = (purpose: 'login_throttle' | 'daf_code' | 'audit_input') =>
      keys.keyedHashes(purpose, 'someone@example.org').map((h) => h.split('.')[0]);
    expect(kidsFor('login_throttle')).not.toContain(firstHashing);
    expect(kidsFor('daf_code')).toContain(firstHashing);
    vi.setSystemTime(activation + 91 * DAY);
    expect(kidsFor('daf_code')).not.toContain(firstHashing);
    expect(kidsFor('audit_input')).toContain(firstHashing);
    // Each purpose has its own derived key: the same value hashes differently.
    const hashingKid = keys.signing('hashing_key').kid;
    expect(keys.keyedHash('login_throttle', 'x')).not.toBe(keys.keyedHash('daf_code', 'x'));
    expect(keys.keyedHash('daf_code', 'x').startsWith(`${hashingKid}.`)).toBe(true);
  });

  it('a rotation deletes aged-out versions, never the hashing key', async () => {
    const now = Date.now() + 400 * DAY;
    const rotation = await rotateServerKeys(t.db, testBox, new Date(now));
    expect(rotation.removed.map((k) => k.name).sort()).toEqual([
      'client_secret_cache_key',
      'cookie_key:production',
      'cookie_key:sandbox',
      'csrf_key',
    ]);
    const hashing = await t.db.selectFrom('server_keys').select('kid').where('name', '=', 'hashing_key').execute();
    expect(hashing).toHaveLength(3);
    const csrf = rotation.keys.filter((k) => k.name === 'csrf_key');
    expect(csrf.map((k) => k.state)).toEqual(['current', 'pending']);
  });
});
