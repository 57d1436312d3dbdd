/**
 * Attack: a server key leaks (a backup of the secrets key and the database, a memory dump, an
 * operator's mistake) and cannot be replaced: whoever holds the cookie key forges session
 * cookies for ever, the CSRF key forges form tokens, the hashing key keeps unlocking the keyed
 * hashes. Rotating by hand would sign every user out and break every form and code at once.
 * Protection: `admin keys rotate --kind server` adds a new version of the cookie keys, the CSRF
 * key, the client-auth cache key and the hashing key. Running servers load it within the key
 * watcher's poll; it starts signing a fixed delay later (so every process verifies it before
 * any signs with it); older versions keep verifying until what they signed has expired (the
 * session's life for cookies and CSRF tokens) and are then ignored, and deleted by the next
 * rotation (the hashing key's are kept: audit rows name them).
 */
import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli as runCliInProcess } from '../../src/cli/run.js';
import { tempDir, testBox, TEST_SECRETS_KEY } from '../helpers/app.js';
import { endpoints, tokenRequest } from '../helpers/flow.js';
import { expectOneLineFailure, runCli, runCliJson } from '../helpers/process.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: { client: { environment: 'production', redirectUris: [REDIRECT] } },
});
afterEach(() => {
  vi.useRealTimers();
});

const SESSION = 'alm_production_session';
const NONCE = 'alm_production_signin';
const dashboard = () => endpoints(server, 'production').dashboard;
const cliEnv = () => ({ DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY, ALMONER_DATA_DIR: tempDir() });

function setCookies(response: Response): Record<string, string> {
  return Object.fromEntries(response.headers.getSetCookie().map((line) => line.split(';')[0]!.split('=') as [string, string]));
}

/** The connections page's sign-in form: its nonce cookie (kept if given) and CSRF token. */
async function signInForm(nonce?: string): Promise<{ nonce: string; csrf: string }> {
  const response = await fetch(`${dashboard()}/oauth/connections`, { headers: nonce ? { cookie: `${NONCE}=${nonce}` } : {} });
  const html = await response.text();
  expect(html).toContain('name="password"');
  return { nonce: nonce ?? setCookies(response)[NONCE]!, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
}

/** Submits the sign-in form; on success, the session cookie and its signature. */
async function signIn(form: { nonce: string; csrf: string }, user: { email: string; password: string }) {
  const response = await fetch(`${dashboard()}/oauth/connections/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `${NONCE}=${form.nonce}`, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(dashboard()).origin },
    body: new URLSearchParams({ csrf: form.csrf, email: user.email, password: user.password }),
  });
  const cookies = setCookies(response);
  return { status: response.status, jti: cookies[SESSION], sig: cookies[`${SESSION}.sig`] };
}

/** The connections page with a session cookie: signed in or not. */
async function connections(jti: string, sig: string) {
  const response = await fetch(`${dashboard()}/oauth/connections`, { headers: { cookie: `${SESSION}=${jti}; ${SESSION}.sig=${sig}` } });
  return { signedIn: (await response.text()).includes(staff.users.member.email) };
}

/** An authorization request with a session cookie: the provider saves the session and sets its cookie again. */
async function authorizeWith(jti: string, sig: string): Promise<Record<string, string>> {
  const url = new URL(endpoints(server, 'production').authorize);
  const params = {
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'read_only',
    state: 's'.repeat(16),
    nonce: 'n'.repeat(16),
    code_challenge: 'c'.repeat(43),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: `${SESSION}=${jti}; ${SESSION}.sig=${sig}` } });
  expect(response.status).toBe(303);
  return setCookies(response);
}

async function secret(name: string, kid: string): Promise<string> {
  const row = await t.db
    .selectFrom('server_keys')
    .select('value')
    .where('name', '=', name)
    .where('kid', '=', kid)
    .executeTakeFirstOrThrow();
  return testBox.open(row.value);
}

/** A cookie signature as keygrip makes it, under the given key. */
const cookieSig = (key: string, jti: string) => crypto.createHmac('sha1', key).update(`${SESSION}=${jti}`).digest('base64url');

async function kids(): Promise<Record<string, string[]>> {
  const rows = await t.db.selectFrom('server_keys').select(['name', 'kid']).orderBy('activates_at').execute();
  const byName: Record<string, string[]> = {};
  for (const row of rows) (byName[row.name] ??= []).push(row.kid);
  return byName;
}

/** Polls with real sleeps (the test moves only Date) until `probe` gives a value. */
async function eventually<T>(probe: () => Promise<T | undefined>, attempts = 120): Promise<T> {
  for (let i = 0; i < attempts; i += 1) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the condition never held');
}

/** A token request whose client authentication passes (so the secret is checked, or found in the cache) and whose grant does not. */
async function clientCheck(): Promise<string> {
  const answer = await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token' });
  return answer.body.error as string;
}

describe('admin keys rotate --kind server', () => {
  it('refuses an unknown kind with one line', async () => {
    const args = ['keys', 'rotate', '--kind', 'everything', '--json'];
    expectOneLineFailure(args, await runCli(args, { env: cliEnv() }), '--kind must be signing or server');
    expect(Object.values(await kids()).every((list) => list.length === 1)).toBe(true);
  });

  it('new versions sign from their activation, picked up by the running server; sessions and forms from before keep working until the old versions age out', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const user = staff.users.member;
    const old = Object.fromEntries(Object.entries(await kids()).map(([name, list]) => [name, list[0]!]));
    const oldCookieKey = await secret('cookie_key:production', old['cookie_key:production']!);

    // Minted before the rotation: a CSRF token and a session cookie, under the first versions.
    const form1 = await signInForm();
    expect(form1.csrf.startsWith(`${old.csrf_key}.`)).toBe(true);
    const session1 = await signIn(form1, user);
    expect(session1.status).toBe(303);
    expect(session1.sig).toBe(cookieSig(oldCookieKey, session1.jti!));

    // The real CLI, in its own process, against the server's database and secrets key.
    const rotation = await runCliJson(['keys', 'rotate', '--kind', 'server'], { env: cliEnv() });
    const rotated = Object.fromEntries((rotation.rotated as { name: string; kid: string }[]).map((k) => [k.name, k.kid]));
    expect(rotation.kind).toBe('server');
    expect(Object.keys(rotated).sort()).toEqual([
      'client_secret_cache_key',
      'cookie_key:production',
      'cookie_key:sandbox',
      'csrf_key',
      'hashing_key',
    ]);
    for (const [name, kid] of Object.entries(rotated)) expect(kid).not.toBe(old[name]);
    const activation = Date.parse(rotation.activates_at as string);
    const newCookieKey = await secret('cookie_key:production', rotated['cookie_key:production']!);

    // Until the activation the old versions sign; a client secret checked now is cached under the old cache key.
    vi.setSystemTime(activation - 5_000);
    expect((await signInForm(form1.nonce)).csrf.startsWith(`${old.csrf_key}.`)).toBe(true);
    expect(await clientCheck()).toBe('invalid_grant');
    const argon2Runs = server.runtime.oidc.secretCache.argon2Runs;

    // After it, the running server (its key watcher polls every few seconds; no restart) signs with the new ones.
    vi.setSystemTime(activation + 1_000);
    const form2 = await eventually(async () => {
      const form = await signInForm(form1.nonce);
      return form.csrf.startsWith(`${rotated.csrf_key}.`) ? form : undefined;
    });
    const session2 = await signIn(form2, user);
    expect(session2.status).toBe(303);
    expect(session2.sig).toBe(cookieSig(newCookieKey, session2.jti!));

    // What was minted before still works: the old session cookie (which the provider signs again
    // with the new key when it next saves the session), the old CSRF token, and the cached
    // client check (no argon2 run).
    expect((await connections(session1.jti!, session1.sig!)).signedIn).toBe(true);
    const resigned = await authorizeWith(session1.jti!, session1.sig!);
    expect(resigned[SESSION]).toBe(session1.jti);
    expect(resigned[`${SESSION}.sig`]).toBe(cookieSig(newCookieKey, session1.jti!));
    expect((await signIn(form1, user)).status).toBe(303);
    expect(await clientCheck()).toBe('invalid_grant');
    expect(server.runtime.oidc.secretCache.argon2Runs).toBe(argon2Runs);

    // Until the old versions age out, a cookie signed with the old key and the old CSRF token verify...
    const { VERIFIES_AFTER_RETIREMENT_SECONDS } = await import('../../src/keys/server-keys.js');
    const agedOut =
      activation + Math.min(VERIFIES_AFTER_RETIREMENT_SECONDS['cookie_key:production'], VERIFIES_AFTER_RETIREMENT_SECONDS.csrf_key) * 1000;
    vi.setSystemTime(agedOut - 60_000);
    expect((await connections(session2.jti!, cookieSig(oldCookieKey, session2.jti!))).signedIn).toBe(true);
    expect((await signIn(form1, user)).status).toBe(303);

    // ...and after, they do not; the new ones still do.
    vi.setSystemTime(agedOut + 1_000);
    expect((await signIn(form1, user)).status).toBe(403);
    const session3 = await signIn(form2, user);
    expect(session3.status).toBe(303);
    expect((await connections(session3.jti!, cookieSig(oldCookieKey, session3.jti!))).signedIn).toBe(false);
    expect((await connections(session3.jti!, session3.sig!)).signedIn).toBe(true);

    // The next rotation deletes the aged-out versions, except the hashing key's (audit rows name its versions).
    let stdout = '';
    let stderr = '';
    const code = await runCliInProcess({
      argv: ['keys', 'rotate', '--kind', 'server', '--json'],
      stdout: (s) => void (stdout += s),
      stderr: (s) => void (stderr += s),
      readStdin: async () => '',
      env: cliEnv(),
    });
    expect(code, stderr).toBe(0);
    const removed = (JSON.parse(stdout) as { removed: { name: string; kid: string }[] }).removed;
    expect(removed.map((k) => `${k.name} ${k.kid}`).sort()).toEqual(
      ['client_secret_cache_key', 'cookie_key:production', 'cookie_key:sandbox', 'csrf_key'].map((name) => `${name} ${old[name]}`),
    );
    const left = await kids();
    expect(left.csrf_key).not.toContain(old.csrf_key);
    expect(left['cookie_key:production']).not.toContain(old['cookie_key:production']);
    expect(left.hashing_key).toContain(old.hashing_key);
    expect(left.hashing_key).toHaveLength(3);
  });
});
