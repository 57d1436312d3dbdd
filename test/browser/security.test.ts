import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/memberships.js';
import {
  collectDocuments,
  passSecondFactor,
  expectCookiesLocked,
  launchChromium,
  signIn,
  startAuthorization,
} from '../helpers/chromium.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({ clients: { client: { environment: 'production', name: 'Safe App', redirectUris: [REDIRECT] } } });
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(async () => context?.close());

const start = (page: Page, scope = 'read_only', clientId = client.client_id) =>
  startAuthorization(page, server, { environment: 'production', clientId, redirectUri: REDIRECT, scope });
const loginResponse = (page: Page) =>
  page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/login'));

/** A page on another site, whose form posts to us (scripts run there: it is not our page). */
async function attackerPage(target: string, fields: Record<string, string>): Promise<Page> {
  const inputs = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
    .join('');
  await context.route('https://evil.example/**', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><form id="f" method="post" action="${target}">${inputs}</form><script>document.getElementById('f').submit()</script>`,
    }),
  );
  const page = await context.newPage();
  const submitted = page.waitForResponse((r) => r.url() === target);
  await page.goto('https://evil.example/');
  await submitted;
  await page.waitForLoadState();
  return page;
}

describe('sign-in', () => {
  it('answers a wrong password and an unknown address with one message, tied to the fields', async () => {
    const page = await context.newPage();
    await start(page);
    const messages: string[] = [];
    for (const attempt of [
      { email: staff.users.member.email, password: 'not the password' },
      { email: 'nobody@example.org', password: 'not the password' },
    ]) {
      const response = loginResponse(page);
      await signIn(page, attempt);
      expect((await response).status()).toBe(401);
      const alert = page.getByRole('alert');
      messages.push((await alert.textContent())!.trim());
      await expect(alert.getAttribute('id')).resolves.toBe('sign-in-error');
      for (const label of ['Email', 'Password']) {
        await expect(page.getByLabel(label).getAttribute('aria-describedby')).resolves.toBe('sign-in-error');
        await expect(page.getByLabel(label).getAttribute('aria-invalid')).resolves.toBe('true');
      }
    }
    expect(messages[0]).toBe('That e-mail address and password do not match an account. Check them and try again.');
    expect(messages[1]).toBe(messages[0]);
    const failed = await t.db.selectFrom('audit_events').select(['event', 'details']).where('event', '=', 'login.failed').execute();
    expect(failed.map((e) => (e.details as { reason: string }).reason)).toEqual(expect.arrayContaining(['wrong_password', 'unknown_user']));
    expect(JSON.stringify(failed)).not.toContain('not the password');
  });

  it('locks the account after five failures: a 429 page with Retry-After, even for the right password, audited', async () => {
    const victim = await createStaff(t.db);
    const page = await context.newPage();
    await start(page);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 6; i += 1) {
      const response = loginResponse(page);
      await signIn(page, i < 5 ? { email: victim.users.owner.email, password: `wrong ${i}` } : victim.users.owner);
      last = await response;
      statuses.push(last.status());
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    const retryAfter = Number(await last!.headerValue('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /Too many unsuccessful sign-in attempts\. For your security, signing in is paused for 1 minute\..*request id/s,
    );
    await expect(page.getByRole('alert').textContent()).resolves.toContain((await last!.headerValue('x-request-id'))!);
    const lockouts = await t.db
      .selectFrom('audit_events')
      .select(['event', 'actor_user_id', 'details'])
      .where('event', '=', 'login.locked_out')
      .where('actor_user_id', '=', victim.users.owner.id)
      .execute();
    expect(lockouts).toEqual([
      {
        event: 'login.locked_out',
        actor_user_id: victim.users.owner.id,
        details: expect.objectContaining({ scope: 'account', seconds: 60 }),
      },
    ]);
  });
});

describe('error pages', () => {
  it('shows an expired interaction as a friendly page with the request id, never a problem document', async () => {
    const page = await context.newPage();
    await start(page);
    await t.db.deleteFrom('oidc_models').where('model', '=', 'Interaction').execute();
    const response = loginResponse(page);
    await signIn(page, staff.users.member);
    const answer = await response;
    expect(answer.status()).toBe(400);
    expect(answer.headers()['content-type']).toMatch(/^text\/html/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This sign-in has expired');
    await expect(page.locator('.ref-box code').textContent()).resolves.toBe(answer.headers()['x-request-id']);
  });

  it('shows unknown clients and unregistered redirect URIs a page, never redirecting', async () => {
    const page = await context.newPage();
    const redirected: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('http://127.0.0.1')) redirected.push(request.url());
    });
    const cases: [Record<string, string>, string][] = [
      [{ client_id: 'live_unknownclient000', redirect_uri: REDIRECT }, 'Unknown application'],
      [{ client_id: client.client_id, redirect_uri: 'https://evil.example/callback' }, 'Unexpected return address'],
    ];
    for (const [params, title] of cases) {
      const url = new URL(`${server.urls.dashboard}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        ...params,
        response_type: 'code',
        scope: 'read_only',
        state: 's',
        nonce: 'n',
        code_challenge: 'a'.repeat(43),
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const response = await page.goto(url.toString());
      expect(response!.status()).toBe(400);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(title);
      await expect(page.locator('.ref-box code').textContent()).resolves.toBe(response!.headers()['x-request-id']);
    }
    expect(redirected).toEqual([]);
  });
});

describe('CSRF', () => {
  it('refuses forged posts: no token, a token sent cross-site, a tampered token; the flow is unharmed', async () => {
    const page = await context.newPage();
    const flow = await start(page);
    await signIn(page, staff.users.admin);
    const consentUrl = new URL(page.url());
    const token = await page.locator('input[name=csrf]').first().inputValue();
    const organization = await page.locator('input[name=organization]').inputValue();

    // From another site, without and with the real token.
    const forgeries: Record<string, string>[] = [{ organization }, { organization, csrf: token }];
    for (const fields of forgeries) {
      const forged = await attackerPage(`${consentUrl.href}/consent`, fields);
      await expect(forged.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('We could not accept this form');
      await forged.close();
    }
    // On our page, with the token altered.
    await page
      .locator('input[name=csrf]')
      .first()
      .evaluate((input, value) => ((input as { value: string }).value = value), `${token.slice(0, -2)}xx`);
    const refused = page.waitForResponse((r) => r.url().endsWith('/consent'));
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await refused).status()).toBe(403);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('We could not accept this form');
    expect(
      await t.db
        .selectFrom('oauth_authorizations')
        .select('grant_id')
        .where('client_id', '=', client.client_id)
        .where('user_id', '=', staff.users.admin.id)
        .execute(),
    ).toEqual([]);

    // The real page still works.
    await page.goto(consentUrl.href);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await flow.callback).searchParams.get('code')).toBeTruthy();

    // A cross-site revoke is refused too, and nothing is revoked.
    const grant = (
      await t.db.selectFrom('oauth_authorizations').select('grant_id').where('user_id', '=', staff.users.admin.id).executeTakeFirstOrThrow()
    ).grant_id;
    const revoke = await attackerPage(`${server.urls.dashboard}/oauth/connections/revoke`, { grant });
    await expect(revoke.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('We could not accept this form');
    expect(
      (await t.db.selectFrom('oauth_authorizations').select('revoked_at').where('grant_id', '=', grant).executeTakeFirstOrThrow())
        .revoked_at,
    ).toBeNull();
  });
});

describe('every page', () => {
  it('forbids framing, runs no script, works without JavaScript, and sets only HttpOnly SameSite cookies', async () => {
    await context.close();
    context = await browser.newContext({ javaScriptEnabled: false });
    const documents = collectDocuments(context, server);
    const multi = await createStaff(t.db);
    await addMember(t.db, { org: staff.ein, email: multi.users.owner.email, role: 'member' });
    const page = await context.newPage();

    const flow = await start(page, 'read_only read_write'); // sign-in page
    await signIn(page, { email: multi.users.owner.email, password: 'wrong password' }); // sign-in error
    await signIn(page, multi.users.owner); // nonprofit choice
    await Promise.all([page.waitForNavigation(), page.getByRole('button').first().click()]); // write access: set up a second factor
    await passSecondFactor(page, multi.users.owner.email); // recovery codes, then consent for the organization chosen
    await page.getByRole('button', { name: 'Approve' }).click(); // back to the application
    expect((await flow.callback).searchParams.get('code')).toBeTruthy();
    await page.goto(`${server.urls.dashboard}/oauth/connections`); // connections
    await page.getByRole('button', { name: 'Sign out' }).click(); // signed out: sign-in form
    await page.goto(`${server.urls.dashboard}/oauth/interaction/missing`); // expired interaction
    await page.goto(`${server.urls.dashboard}/oauth/no-such-page`); // not found
    await page.goto(`${server.urls.sandboxDashboard}/oauth/sandbox/authorize?client_id=test_unknown`); // provider error page
    await page.goto(`${server.urls.sandboxDashboard}/oauth/connections`); // sandbox sign-in

    const seen: string[] = [];
    for (const document of await Promise.all(documents)) {
      seen.push(`${document.status} ${new URL(document.url).pathname.replace(/\/interaction\/[^/]+/, '/interaction/:uid')}`);
      expect(document.headers['x-frame-options'], document.url).toBe('DENY');
      const policy = document.headers['content-security-policy'] ?? '';
      expect(policy, document.url).toContain("frame-ancestors 'none'");
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toMatch(/script-src|unsafe-inline/);
      if (document.html) {
        expect(document.html).toMatch(/<html lang="en">/);
        expect(document.html).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
      }
    }
    // Sign-in, its error, the nonprofit choice and consent; connections; the error pages.
    expect(seen).toEqual(
      expect.arrayContaining([
        '200 /oauth/interaction/:uid',
        '401 /oauth/interaction/:uid/login',
        '200 /oauth/connections',
        '400 /oauth/interaction/:uid',
        '404 /oauth/no-such-page',
        '400 /oauth/sandbox/authorize',
      ]),
    );
    // Sign-in, the nonprofit choice, the second factor's setup (write access) and consent.
    expect(seen.filter((s) => s === '200 /oauth/interaction/:uid')).toHaveLength(4);
    expect(seen).toContain('200 /oauth/interaction/:uid/second-factor/setup');
    await expectCookiesLocked(context);
  });
});
