/**
 * Attack: take a copy of the database (a backup, a replica, a leaked dump) and run candidate
 * e-mail addresses, IP addresses and DAF codes through SHA-256 to learn whose sign-ins failed
 * and from where, and to recover outstanding donor codes (12 characters, ~58 bits: within reach
 * of a plain-hash search, and a recovered code approves a donor account).
 * Protection: throttle keys and DAF code hashes are HMAC-SHA-256 under a server hashing key
 * (one derived key per purpose) that the database holds only sealed with ALMONER_SECRETS_KEY.
 * Lookups keep working across `admin keys rotate --kind server`: codes are looked up under
 * every live version (and, for codes issued before the upgrade, their old plain hash); a
 * lockout is honoured under the previous version too.
 */
import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { FormBrowser } from '../helpers/browser.js';
import { dumpAllRows } from '../helpers/dump.js';
import { endpoints } from '../helpers/flow.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
afterEach(() => {
  vi.useRealTimers();
});

const digests = (value: string) => {
  const digest = crypto.createHash('sha256').update(value).digest();
  return [digest.toString('hex'), digest.toString('base64'), digest.toString('base64url')];
};

async function connectionsSignIn(email: string, password: string): Promise<number> {
  const browser = new FormBrowser(() => false);
  const page = await browser.request(`${endpoints(server, 'production').dashboard}/oauth/connections`);
  return (await browser.submit(page, '/oauth/connections/sign-in', { email, password })).status;
}

let providers = 0;
/** A fund provider with an API key in the sandbox. */
async function fundProvider() {
  providers += 1;
  const ein = `98-77700${String(providers).padStart(2, '0')}`;
  await addOrganization(t.db, { ein, name: `Hash Fund ${providers}`, kind: 'fund_provider' });
  return (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key;
}

/** A pending donor account and a fresh code for it. */
async function issueCode(key: string) {
  const email = `donor-${crypto.randomBytes(4).toString('hex')}@example.org`;
  const account = await apiRequest(server, 'sandbox', 'POST', '/v1/donor_accounts', { bearer: key, json: { donor: { email } } });
  expect(account.status).toBe(201);
  const token = await apiRequest(server, 'sandbox', 'POST', `/v1/donor_accounts/${account.body.id as string}/authorization_tokens`, {
    bearer: key,
    json: {},
  });
  expect(token.status).toBe(201);
  return { accountId: account.body.id as string, tokenId: token.body.id as string, code: token.body.code as string };
}

const verify = (key: string, code: string) =>
  apiRequest(server, 'sandbox', 'POST', '/v1/authorization_tokens/verify', { bearer: key, json: { code } });
const storedHash = async (tokenId: string) =>
  (await t.db.selectFrom('donor_authorization_tokens').select('code_hash').where('id', '=', tokenId).executeTakeFirstOrThrow()).code_hash;

/** Rotates the server keys as `admin keys rotate --kind server` does, has the server load them, and moves the clock past their activation. */
async function rotateAndActivate() {
  const { rotateServerKeys } = await import('../../src/keys/server-keys.js');
  const { testBox } = await import('../helpers/app.js');
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  const rotation = await rotateServerKeys(t.db, testBox);
  await server.runtime.keys.refresh();
  vi.setSystemTime(new Date(rotation.activates_at).getTime() + 1000);
  return { hashingKid: rotation.rotated.find((k) => k.name === 'hashing_key')!.kid };
}

describe('a copy of the database', () => {
  it('holds no plain SHA-256 of the e-mail addresses, caller addresses and codes it keys on, and codes still verify', async () => {
    const stranger = `stranger-${crypto.randomBytes(4).toString('hex')}@example.org`;
    expect(await connectionsSignIn(stranger, 'a wrong password')).toBe(401);
    expect(await connectionsSignIn(staff.users.member.email, 'a wrong password')).toBe(401);
    const key = await fundProvider();
    const { code, accountId, tokenId } = await issueCode(key);

    const throttleRows = await t.db.selectFrom('login_throttle').select('key').execute();
    expect(throttleRows.length).toBe(3); // two accounts and one caller address
    const dump = await dumpAllRows(t.db);
    for (const value of [stranger, staff.users.member.email, '127.0.0.1', code]) {
      for (const digest of digests(value)) expect(dump.includes(digest), `the dump holds SHA-256(${value})`).toBe(false);
    }
    expect(dump.includes(code)).toBe(false);
    expect(await storedHash(tokenId)).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/);

    // The keyed hash is what lookups use: the code verifies (case and dashes as a person types it).
    const verified = await verify(key, code.toLowerCase().replace(/(....)/g, '$1-'));
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: accountId, status: 'approved' });
  });
});

describe('across a rotation of the hashing key', () => {
  it('verifies a code issued before the rotation, hashes new codes under the new key, and still verifies a code stored before the upgrade', async () => {
    const key = await fundProvider();
    const before = await issueCode(key);
    const legacy = await issueCode(key);
    // A code issued before keyed hashes existed was stored as its plain SHA-256, in hex.
    await t.db
      .updateTable('donor_authorization_tokens')
      .set({ code_hash: digests(legacy.code)[0]! })
      .where('id', '=', legacy.tokenId)
      .execute();
    const oldKid = (await storedHash(before.tokenId)).split('.')[0];

    const { hashingKid } = await rotateAndActivate();
    expect(hashingKid).not.toBe(oldKid);
    const after = await issueCode(key);
    expect((await storedHash(after.tokenId)).split('.')[0]).toBe(hashingKid);

    for (const { code, accountId } of [before, after, legacy]) {
      const verified = await verify(key, code);
      expect(verified.status, `code of ${accountId}`).toBe(200);
      expect(verified.body).toMatchObject({ id: accountId, status: 'approved' });
    }
    // Used codes stay used, under whichever key they were found.
    expect((await verify(key, before.code)).status).toBe(404);
  });

  it('keeps a lockout started before the rotation in force after it', async () => {
    const locked = `locked-${crypto.randomBytes(4).toString('hex')}@example.org`;
    for (let i = 0; i < 4; i += 1) expect(await connectionsSignIn(locked, `wrong ${i}`)).toBe(401);
    expect(await connectionsSignIn(locked, 'wrong 4')).toBe(429);
    await rotateAndActivate();
    expect(await connectionsSignIn(locked, 'wrong 5')).toBe(429);
    // Another address is not affected, and its failures are counted under the new key.
    const other = `other-${crypto.randomBytes(4).toString('hex')}@example.org`;
    expect(await connectionsSignIn(other, 'wrong')).toBe(401);
    const kids = new Set((await t.db.selectFrom('login_throttle').select('key').execute()).map((r) => r.key.split(':')[1]!.split('.')[0]));
    expect(kids.size).toBeGreaterThanOrEqual(2);
  });
});
