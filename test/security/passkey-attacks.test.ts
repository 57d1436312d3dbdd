import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { passkeyAnswersPerCallerAddressAndPasskey } from '../../src/limits/rate-limits.js';

/**
 * Attacks on passkeys (docs/security.md, "Passkeys"), over HTTP with a passkey made in
 * software: an answer replayed (even in a concurrent burst, with the cookies it came with),
 * carried to another browser, made for another site or without user verification, another
 * user's passkey at a second-factor step, a burst of bad answers, and the new forms posted
 * without their CSRF token. The dashboards are at localhost: WebAuthn needs a domain name.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0, dashboardsAtLocalhost: true });
const origin = () => server.urls.dashboard;
const FAILED = 'That passkey did not sign you in';

interface Options {
  challenge: string;
  rpId: string;
  userVerification: string;
  allowCredentials?: { id: string }[];
}

/** A browser on the sign-in page that asked for passkey options: its CSRF token, the options, and a way to answer. */
async function askOptions(fields: Record<string, string> = {}, browser = new FormBrowser(() => false)) {
  const page = await browser.request(`${origin()}/sign-in`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
  const answer = await browser.request(`${origin()}/sign-in/passkey/options`, { method: 'POST', form: { csrf, ...fields } });
  expect(answer.status).toBe(200);
  const options = JSON.parse(answer.html) as Options;
  return {
    browser,
    csrf,
    options,
    /** Posts `response` as the sign-in form would, from this browser. */
    submit: (response: string) =>
      browser.request(`${origin()}/sign-in/passkey`, { method: 'POST', form: { csrf, next: '/account', response, ...fields } }),
  };
}

async function userWithPasskey(role: 'owner' | 'admin' | 'member' = 'member') {
  const staff = await createStaff(t.db);
  const user = staff.users[role];
  const passkey = new SoftwarePasskey(origin());
  await passkey.storeFor(t.db, user.id);
  return { user, passkey };
}

describe('passkey attacks', () => {
  it('offers options for this site only: the RP ID is the dashboard host, user verification required for a sign-in with no password', async () => {
    const { options } = await askOptions();
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('runs script only on the pages that offer passkeys, only our own two files, never inline', async () => {
    const signIn = await fetch(`${origin()}/sign-in`);
    const html = await signIn.text();
    expect(signIn.headers.get('content-security-policy')).toContain("script-src 'self'; connect-src 'self';");
    expect([...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.trim())).toEqual([
      'src="/static/simplewebauthn-browser.js" defer',
      'src="/static/passkeys.js" defer',
    ]);
    for (const file of ['/static/simplewebauthn-browser.js', '/static/passkeys.js']) {
      const script = await fetch(`${origin()}${file}`);
      expect(script.status, file).toBe(200);
      expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    }
    // A page without a passkey form keeps the no-script policy.
    const forgot = await fetch(`${origin()}/forgot-password`);
    expect(forgot.headers.get('content-security-policy')).not.toContain('script-src');
    expect(await forgot.text()).not.toContain('<script');
  });

  it('a right answer signs in once: the same answer sent 5 times at once, with the cookies it came with, starts exactly one session', async () => {
    const { user, passkey } = await userWithPasskey();
    const countChallenges = async () => (await t.db.selectFrom('webauthn_challenges').select('id').execute()).length;
    const before = await countChallenges();
    const asked = await askOptions();
    expect(await countChallenges()).toBe(before + 1);
    const response = passkey.answer(asked.options.challenge);
    const cookie = asked.browser.cookieHeader(new URL(origin()));
    const body = new URLSearchParams({ csrf: asked.csrf, next: '/account', response }).toString();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        fetch(`${origin()}/sign-in/passkey`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 401, 401, 401, 401]);
    expect(answers.find((a) => a.status === 303)!.headers.get('location')).toBe('/account');
    const sessions = await t.db
      .selectFrom('oidc_models')
      .select('payload')
      .where('model', '=', 'Session')
      .where((eb) => eb(eb.ref('payload', '->>').key('accountId'), '=', user.id))
      .execute();
    expect(sessions.map((s) => (s.payload as { amr?: string[] }).amr)).toEqual([['hwk']]);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['event', 'details'])
      .where('event', 'in', ['login.succeeded', 'login.failed'])
      .where('details', '@>', JSON.stringify({ method: 'passkey' }) as never)
      .where('actor_user_id', '=', user.id)
      .execute();
    expect(audit.map((a) => a.event)).toEqual(['login.succeeded']);
    expect(await countChallenges()).toBe(before);
  });

  it('refuses an answer carried to another browser, made for another origin, or given without user verification', async () => {
    const { passkey } = await userWithPasskey();
    // Signed over browser A's challenge, posted by browser B (which asked for its own).
    const a = await askOptions();
    const b = await askOptions();
    const carried = await b.submit(passkey.answer(a.options.challenge));
    expect(carried.status).toBe(401);
    expect(carried.html).toContain(FAILED);
    // A look-alike site relaying the challenge: the browser names that site as the origin.
    const c = await askOptions();
    expect((await c.submit(passkey.answer(c.options.challenge, { origin: 'http://almoner.example.net' }))).status).toBe(401);
    // No PIN or biometric: a sign-in with the passkey alone needs one.
    const d = await askOptions();
    expect((await d.submit(passkey.answer(d.options.challenge, { userVerified: false }))).status).toBe(401);
    // And an answer with no options asked first has no challenge to answer.
    const e = new FormBrowser(() => false);
    const page = await e.request(`${origin()}/sign-in`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    expect(
      (await e.request(`${origin()}/sign-in/passkey`, { method: 'POST', form: { csrf, response: passkey.answer('x'.repeat(43)) } })).status,
    ).toBe(401);
    // The key is still good for a proper answer.
    const f = await askOptions();
    expect((await f.submit(passkey.answer(f.options.challenge))).url.pathname).toBe('/account');
  });

  it('refuses the passkey of a disabled user', async () => {
    const { user, passkey } = await userWithPasskey();
    await t.db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', user.id).execute();
    const asked = await askOptions();
    expect((await asked.submit(passkey.answer(asked.options.challenge))).status).toBe(401);
  });

  it('takes only the waiting user’s passkey at the second-factor step', async () => {
    const { user, passkey } = await userWithPasskey('owner');
    const other = await userWithPasskey('owner');
    const browser = new FormBrowser(() => false);
    const form = await browser.request(`${origin()}/sign-in?next=/account`);
    const step = await browser.submit(form, '/sign-in', { email: user.email, password: user.password });
    expect(step.url.pathname).toBe('/sign-in/second-factor');
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
    const ask = async () =>
      JSON.parse(
        (await browser.request(`${origin()}/sign-in/passkey/options`, { method: 'POST', form: { csrf, step: 'second-factor' } })).html,
      ) as Options;
    const submit = (response: string) =>
      browser.request(`${origin()}/sign-in/passkey`, { method: 'POST', form: { csrf, step: 'second-factor', next: '/account', response } });

    const first = await ask();
    expect(first.allowCredentials!.map((c) => c.id)).toEqual([passkey.id]);
    const wrong = await submit(other.passkey.answer(first.challenge));
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('That passkey did not work');
    const second = await ask();
    const right = await submit(passkey.answer(second.challenge));
    expect(right.url.pathname).toBe('/account');
    const session = await t.db
      .selectFrom('oidc_models')
      .select('payload')
      .where('model', '=', 'Session')
      .where((eb) => eb(eb.ref('payload', '->>').key('accountId'), '=', user.id))
      .executeTakeFirstOrThrow();
    expect((session.payload as { amr?: string[] }).amr).toEqual(['pwd', 'hwk']);
  });

  it(`counts a burst of bad answers from one address atomically: ${passkeyAnswersPerCallerAddressAndPasskey.max} refused as wrong, the rest (and then a right one from there) told to wait`, async () => {
    const { passkey } = await userWithPasskey();
    const browsers = await Promise.all(Array.from({ length: 10 }, () => askOptions()));
    // Each signs something other than its challenge: a wrong answer from the right key.
    const answers = await Promise.all(browsers.map((b) => b.submit(passkey.answer(`${b.options.challenge.slice(1)}A`))));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([
      ...Array(passkeyAnswersPerCallerAddressAndPasskey.max).fill(401),
      ...Array(10 - passkeyAnswersPerCallerAddressAndPasskey.max).fill(429),
    ]);
    expect(answers.find((a) => a.status === 429)!.html).toContain('Try again in');
    const late = await askOptions();
    expect((await late.submit(passkey.answer(late.options.challenge))).status).toBe(429);
  });

  it('refuses every new passkey form posted without its CSRF token (403), and changes nothing', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.owner;
    const passkey = new SoftwarePasskey(origin());
    await passkey.storeFor(t.db, user.id);
    const anonymous = new FormBrowser(() => false);
    await anonymous.request(`${origin()}/sign-in`);
    for (const path of ['/sign-in/passkey/options', '/sign-in/passkey']) {
      expect((await anonymous.request(`${origin()}${path}`, { method: 'POST', form: { response: '{}' } })).status, path).toBe(403);
    }
    // Signed in (password then passkey), the Security page's forms.
    const asked = await askOptions();
    await asked.submit(passkey.answer(asked.options.challenge));
    const session = { browser: asked.browser };
    for (const [path, form] of [
      ['/account/security/passkeys/options', { name: 'Forged' }],
      ['/account/security/passkeys', { name: 'Forged', response: '{}' }],
      ['/account/security/passkeys/remove', { id: passkey.id, password: user.password }],
    ] as const) {
      expect(
        (await session.browser.request(`${origin()}${path}`, { method: 'POST', form: { ...form, csrf: 'forged' } })).status,
        path,
      ).toBe(403);
    }
    expect(await t.db.selectFrom('webauthn_credentials').select('id').where('user_id', '=', user.id).execute()).toEqual([
      { id: passkey.id },
    ]);
    expect(await t.db.selectFrom('webauthn_challenges').select('id').where('purpose', '=', 'register').execute()).toEqual([]);
  });

  it('refuses a registration answered for another browser’s challenge, and a name too long', async () => {
    const staff = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const security = await session.get('/account/security');
    expect(security.html).toContain('Add a passkey');
    const csrf = /name="csrf" value="([^"]+)"/.exec(security.html)![1]!;
    const tooLong = await session.browser.request(`${origin()}/account/security/passkeys/options`, {
      method: 'POST',
      form: { csrf, name: 'x'.repeat(101) },
    });
    expect(tooLong.status).toBe(400);
    // No options asked: there is no challenge for the answer, whatever it says.
    const unasked = await session.browser.request(`${origin()}/account/security/passkeys`, {
      method: 'POST',
      form: { csrf, name: 'Laptop', response: JSON.stringify({ id: 'abc', response: {} }) },
    });
    expect(unasked.status).toBe(400);
    expect(unasked.html).toContain('The passkey was not added');
    expect(await t.db.selectFrom('webauthn_credentials').select('id').where('user_id', '=', staff.users.admin.id).execute()).toEqual([]);
  });
});
