import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { nextCode, totpCode } from '../helpers/authenticator.js';
import { endpoints } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { secondFactorFailures } from '../../src/limits/rate-limits.js';

/**
 * Attacks on the second factor (docs/security.md, "Second factors"): a code replayed within
 * its step, guesses in a concurrent burst, and forms posted without their CSRF token.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const origin = () => endpoints(server, 'production').dashboard;
const redirectUri = 'https://app.example.org/callback';

async function passwordStep(user: { email: string; password: string }) {
  const browser = new FormBrowser(() => false);
  const form = await browser.request(`${origin()}/sign-in?next=/account`);
  const page = await browser.submit(form, '/sign-in', user);
  expect(page.url.pathname).toBe('/sign-in/second-factor');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
  /** Posts a code from this browser's pending sign-in. */
  const post = (code: string) =>
    browser.request(`${origin()}/sign-in/second-factor`, { method: 'POST', form: { csrf, next: '/account', code } });
  return { browser, page, post };
}

async function enrolled() {
  const s = await createStaff(t.db);
  const user = s.users.member;
  const session = await dashboardSession(server, 'production', user);
  await enrolAuthenticator(session, user.email);
  return { s, user };
}

describe('second-factor attacks', () => {
  it('a TOTP code works once: replayed in its own step (even by a concurrent burst) it is refused', async () => {
    const { user } = await enrolled();
    const code = await nextCode(user.email);
    const attempts = await Promise.all(Array.from({ length: 5 }, () => passwordStep(user)));
    const answers = await Promise.all(attempts.map((a) => a.post(code)));
    expect(answers.filter((a) => a.url.pathname === '/account')).toHaveLength(1);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(4);
    // Later, the same code is still refused.
    const late = await passwordStep(user);
    expect((await late.post(code)).status).toBe(401);
  });

  it('a burst of wrong codes is counted before any is checked: only the limit is tried, then even the right code waits', async () => {
    const { user } = await enrolled();
    const { post, browser } = await passwordStep(user);
    const guesses = Array.from({ length: 20 }, (_, i) => String(100000 + i * 7919).slice(0, 6));
    const answers = await Promise.all(guesses.map((g) => post(g)));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(secondFactorFailures.max);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(20 - secondFactorFailures.max);
    expect(refused[0]!.html).toContain('Too many wrong codes');
    expect((await post(await nextCode(user.email))).status).toBe(429);
    expect(browser.cookieHeader(new URL(origin()))).not.toContain('alm_production_session=');
  });

  it('recovery codes share the limit: guessing them is throttled the same way', async () => {
    const { user } = await enrolled();
    const { post } = await passwordStep(user);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(`AAAA-BBBB-CCCC-${String(1000 + i)}`)));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(secondFactorFailures.max);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(12 - secondFactorFailures.max);
  });

  it('a code from a step outside the window is refused', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const session = await dashboardSession(server, 'production', user);
    const setup = await session.get('/account/security/authenticator');
    const key = /<p class="secret"><code>([A-Z2-7]+)<\/code>/.exec(setup.html)![1]!;
    const old = totpCode(key, Math.floor(Date.now() / 30000) - 3);
    const refused = await session.browser.submit(setup, '/account/security/authenticator', { code: old });
    expect(refused.status).toBe(400);
    expect(
      (await t.db.selectFrom('totp_credentials').select('confirmed_at').where('user_id', '=', user.id).executeTakeFirstOrThrow())
        .confirmed_at,
    ).toBeNull();
  });

  it('refuses every second-factor form posted without its CSRF token (403), and changes nothing', async () => {
    const { user } = await enrolled();
    const session = await dashboardSession(server, 'production', user);
    for (const path of ['/account/security/authenticator', '/account/security/authenticator/remove', '/account/security/recovery-codes']) {
      const answer = await session.browser.request(`${origin()}${path}`, {
        method: 'POST',
        form: { code: '123456', password: user.password },
      });
      expect(answer.status, path).toBe(403);
    }
    expect(await t.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', user.id).executeTakeFirst()).toBeDefined();
    const { browser } = await passwordStep(user);
    const noToken = await browser.request(`${origin()}/sign-in/second-factor`, {
      method: 'POST',
      form: { code: await nextCode(user.email) },
    });
    expect(noToken.status).toBe(403);
    expect(browser.cookieHeader(new URL(origin()))).not.toContain('alm_production_session=');

    // The flow's forms: the step-up code and the setup of a new app.
    const fresh = await createStaff(t.db);
    const client = await server.registerClient({ environment: 'production' });
    const flow = new FormBrowser((next) => next.origin === new URL(redirectUri).origin);
    const url = new URL(endpoints(server, 'production').authorize);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid read_write',
      state: 's',
      nonce: 'n',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const setupPage = await flow.submit(await flow.request(url.toString()), '/login', fresh.users.member);
    expect(setupPage.html).toContain('/second-factor/setup"');
    for (const suffix of ['/second-factor/setup', '/second-factor']) {
      const answer = await flow.request(new URL(`${setupPage.url.pathname}${suffix}`, setupPage.url).toString(), {
        method: 'POST',
        form: { code: '123456' },
      });
      expect(answer.status, suffix).toBe(403);
    }
    expect(
      await t.db
        .selectFrom('totp_credentials')
        .select('confirmed_at')
        .where('user_id', '=', fresh.users.member.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ confirmed_at: null });
  });

  it('removing the app from a stolen session does not make a password oracle: one budget of 5 wrong passwords, shared with the password change', async () => {
    const { user } = await enrolled();
    const session = await dashboardSession(server, 'production', user);
    const page = await session.get('/account/security');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        session.browser.request(`${origin()}/account/security/authenticator/remove`, {
          method: 'POST',
          form: { csrf, password: `guess number ${i}` },
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(3);
    const right = await session.browser.request(`${origin()}/account/security/authenticator/remove`, {
      method: 'POST',
      form: { csrf, password: user.password },
    });
    expect(right.status).toBe(429);
    const change = await session.get('/account/password');
    const changed = await session.browser.submit(change, '/account/password', {
      current: user.password,
      password: 'a brand new passphrase 42',
      confirmation: 'a brand new passphrase 42',
    });
    expect(changed.status).toBe(429);
    expect(await t.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', user.id).executeTakeFirst()).toBeDefined();
  });
});
