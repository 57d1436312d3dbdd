import fs from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { addMember } from '../../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { expectCookiesLocked, launchChromium, passSecondFactor, signIn, startAuthorization } from '../helpers/chromium.js';
import { introspect, tokenRequest, type Env } from '../helpers/flow.js';
import { createStaff, type OAuthTestServer } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { screenshotTarget } from '../helpers/screenshots.js';

const { testDatabase: t, server, staff } = useOAuthServer();
let browser: Browser;
let context: BrowserContext;

const REDIRECT: Record<Env, string> = { production: 'https://app.example.org/callback', sandbox: 'http://127.0.0.1:9999/callback' };
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#0b7285"/><path d="M14 44 27 24l8 12 6-8 9 16Z" fill="#fff"/><circle cx="45" cy="19" r="5" fill="#ffd43b"/></svg>';

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
  // Application logos live on other https hosts; here one answers from the test.
  await context.route('https://logo.example/**', (route) => route.fulfill({ contentType: 'image/svg+xml', body: LOGO }));
});
afterEach(async () => context?.close());

// Run inside the page (the test's tsconfig has no DOM types).
const imageLoaded = (img: unknown) =>
  (img as { complete: boolean; naturalWidth: number }).complete && (img as { naturalWidth: number }).naturalWidth > 0;
const beforeContent = (img: unknown) =>
  (globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } }).getComputedStyle(img, '::before')
    .content;

const register = (environment: Env, extra: Parameters<OAuthTestServer['registerClient']>[0] extends infer I ? Partial<I> : never = {}) =>
  server.registerClient({ environment, redirectUris: [REDIRECT[environment]], ...extra });

describe.each(['production', 'sandbox'] as Env[])('the authorization code flow in a real browser (%s)', (environment) => {
  it('signs in, chooses the nonprofit, approves, and the code exchanges for tokens', async () => {
    const client = await register(environment, { name: `Books ${environment}` });
    const [first, second] = await Promise.all([createStaff(t.db), createStaff(t.db)]);
    await addMember(t.db, { org: second.ein, email: first.users.member.email, role: 'member' });
    const secondName = (await t.db.selectFrom('organizations').select('name').where('id', '=', second.orgId).executeTakeFirstOrThrow())
      .name;
    const page = await context.newPage();

    const flow = await startAuthorization(page, server, {
      environment,
      clientId: client.client_id,
      redirectUri: REDIRECT[environment],
      scope: 'openid read_only read_write',
    });
    await expect.poll(() => page.getByText('Sandbox', { exact: true }).first().isVisible()).toBe(environment === 'sandbox');
    await signIn(page, first.users.member);
    await expect(page.getByRole('heading', { name: 'Choose a nonprofit' }).isVisible()).resolves.toBe(true);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: secondName, exact: true }).click()]);
    // Write access needs a second factor: the member sets up an authenticator app, and the consent is for the nonprofit chosen.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Set up a second factor');
    await passSecondFactor(page, first.users.member.email);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Books ${environment} wants access to ${secondName}`);
    await page.getByRole('button', { name: 'Approve' }).click();

    const callback = await flow.callback;
    expect(callback.searchParams.get('state')).toBe(flow.state);
    const tokens = await tokenRequest(server, environment, client, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: flow.verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'read_only read_write openid' });
    expect(tokens.body.id_token).toEqual(expect.any(String));
    const row = await t.db
      .selectFrom('oauth_authorizations')
      .select(['organization_id', 'environment'])
      .where('client_id', '=', client.client_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ organization_id: second.orgId, environment });
    await expectCookiesLocked(context);
  });
});

describe('consent decisions', () => {
  it('Deny sends the browser back with error=access_denied and the state', async () => {
    const client = await register('production');
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_only',
    });
    await signIn(page, staff.users.owner);
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await flow.callback;
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(flow.state);
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('narrows a read-only user asking for read_only read_write to read access, on the screen and in the token', async () => {
    const client = await register('production');
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_only read_write',
    });
    await signIn(page, staff.users.read_only);
    const granted = page.locator('ul.perms:not(.withheld) li');
    await expect(granted.allTextContents()).resolves.toEqual([expect.stringContaining('View your nonprofit’s data')]);
    await expect(page.locator('ul.withheld li').allTextContents()).resolves.toEqual([
      expect.stringContaining('View and change your nonprofit’s data'),
    ]);
    await expect(page.getByText('Only the access listed above will be granted.').isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Approve' }).click();
    const callback = await flow.callback;
    const tokens = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: flow.verifier,
    });
    expect(tokens.body.scope).toBe('read_only');
    expect((await introspect(server, 'production', client, tokens.body.access_token as string)).body).toMatchObject({
      active: true,
      scope: 'read_only',
    });
  });

  it('explains to a read-only user asked for read_write alone why it cannot be approved, and offers only Deny', async () => {
    const client = await register('production');
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_write',
    });
    await signIn(page, staff.users.read_only);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /You cannot approve this request\..*does not allow you to grant read_write/s,
    );
    await expect(page.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Deny' }).click();
    expect((await flow.callback).searchParams.get('error')).toBe('access_denied');
  });

  it('tells an organization-subject approver the access belongs to the nonprofit; a Member may only deny', async () => {
    const client = await register('production', { scopes: ['read_only', 'read_write'], subjectType: 'organization' });
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_only',
    });
    await signIn(page, staff.users.admin);
    await expect(page.getByRole('heading', { name: 'Access for the nonprofit, not for you' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText(/belongs to .*, not to you: it keeps working if you leave the nonprofit/).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Approve' }).click();
    const tokens = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code: (await flow.callback).searchParams.get('code')!,
      code_verifier: flow.verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.id_token).toBeUndefined();

    const memberContext = await browser.newContext();
    const memberPage = await memberContext.newPage();
    await startAuthorization(memberPage, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_only',
    });
    await signIn(memberPage, staff.users.member);
    await expect(memberPage.getByRole('alert').textContent()).resolves.toMatch(/Only an Owner or Admin/);
    await expect(memberPage.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await memberPage.context().close();
  });
});

describe('sessions and repeated requests', () => {
  it('skips consent when a live authorization covers the request, asks again for more or with prompt=consent, and prompt=login re-authenticates with a new session cookie', async () => {
    const client = await register('production');
    // One tab per request, sharing the browser's cookies (the session).
    let page = await context.newPage();
    const ask = async (scope: string, extraParams?: Record<string, string>) => {
      page = await context.newPage();
      return startAuthorization(page, server, {
        environment: 'production',
        clientId: client.client_id,
        redirectUri: REDIRECT.production,
        scope,
        extraParams,
      });
    };
    const sessionCookie = async () => (await context.cookies()).find((c) => c.name === 'alm_production_session')?.value;

    const first = await ask('read_only');
    await signIn(page, staff.users.owner);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await first.callback).searchParams.get('code')).toBeTruthy();
    const afterSignIn = await sessionCookie();
    expect(afterSignIn).toBeTruthy();

    // Covered: no page at all, straight back with a code of the same authorization.
    const again = await ask('read_only');
    expect((await again.callback).searchParams.get('code')).toBeTruthy();
    expect(
      await t.db.selectFrom('oauth_authorizations').select('grant_id').where('client_id', '=', client.client_id).execute(),
    ).toHaveLength(1);

    // More than was granted: asked again (write access after a second factor, set up here).
    const more = await ask('read_only read_write');
    await passSecondFactor(page, staff.users.owner.email);
    await expect(page.getByRole('button', { name: 'Approve' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await more.callback).searchParams.get('code')).toBeTruthy();

    // prompt=consent: asked even though it is covered.
    const forced = await ask('read_only', { prompt: 'consent' });
    await expect(page.getByRole('button', { name: 'Approve' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Deny' }).click();
    expect((await forced.callback).searchParams.get('error')).toBe('access_denied');

    // prompt=login: the sign-in page despite the session, and a new session id after it.
    const relogin = await ask('read_only', { prompt: 'login' });
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await signIn(page, staff.users.owner);
    expect((await relogin.callback).searchParams.get('code')).toBeTruthy();
    const afterRelogin = await sessionCookie();
    expect(afterRelogin).toBeTruthy();
    expect(afterRelogin).not.toBe(afterSignIn);
  });
});

describe('the consent screen', () => {
  it('shows the application logo, the Sandbox marker, the nonprofit, the approver and each permission, and is the screenshot in docs/oauth.md', async () => {
    await addOrganization(t.db, { ein: '12-3456780', name: 'Riverside Food Bank' });
    await addUser(
      t.db,
      { email: 'dana@riverside.example.org', password: 'riverside-pass', displayName: 'Dana Whitfield' },
      MIN_PASSWORD_PARAMS,
    );
    await addMember(t.db, { org: '12-3456780', email: 'dana@riverside.example.org', role: 'member' });
    const client = await register('sandbox', {
      name: 'Grantwise Reporting',
      logoUri: 'https://logo.example/grantwise.svg',
      scopes: ['read_only', 'read_write', 'openid', 'offline_access'],
    });
    const page = await (await browser.newContext({ viewport: { width: 820, height: 900 }, deviceScaleFactor: 1 })).newPage();
    await page.context().route('https://logo.example/**', (route) => route.fulfill({ contentType: 'image/svg+xml', body: LOGO }));
    await startAuthorization(page, server, {
      environment: 'sandbox',
      clientId: client.client_id,
      redirectUri: REDIRECT.sandbox,
      scope: 'openid read_only read_write',
    });
    await signIn(page, { email: 'dana@riverside.example.org', password: 'riverside-pass' });

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Grantwise Reporting wants access to Riverside Food Bank',
    );
    await expect(page.locator('img.app-logo').evaluate(imageLoaded)).resolves.toBe(true);
    await expect(page.locator('.env-badge').first().textContent()).resolves.toBe('Sandbox');
    await expect(page.locator('.facts').textContent()).resolves.toMatch(
      /Riverside Food Bank.*EIN 12-3456780.*Dana Whitfield.*dana@riverside\.example\.org.*Member/s,
    );
    await expect(page.locator('ul.perms li .perm-title').allTextContents()).resolves.toEqual([
      'View your nonprofit’s data',
      'View and change your nonprofit’s data',
      'Know who you are',
    ]);
    await expect(page.getByRole('button', { name: 'Approve' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Deny' }).isVisible()).resolves.toBe(true);

    // The copy in docs/ (shown by docs/oauth.md) is refreshed only on request; otherwise the screenshot goes to a temporary directory.
    const target = screenshotTarget('consent-screen.png');
    await page.screenshot({ path: target, fullPage: true });
    const png = fs.readFileSync(target);
    expect(png.subarray(0, 8).toString('hex'), 'a PNG signature').toBe('89504e470d0a1a0a');
    expect(png.length).toBeGreaterThan(10_000);
    await page.context().close();
  });

  it('shows the application initial when its logo cannot be loaded', async () => {
    const client = await register('production', { name: 'ledgerly', logoUri: 'https://logo.example/missing.png' });
    await context.unroute('https://logo.example/**');
    await context.route('https://logo.example/**', (route) => route.abort());
    const page = await context.newPage();
    await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT.production,
      scope: 'read_only',
    });
    await signIn(page, staff.users.member);
    await expect(page.locator('img.app-logo').evaluate(imageLoaded)).resolves.toBe(false);
    // The initial is drawn over the broken image by its ::before (CSS only).
    await expect(page.locator('img.app-logo').evaluate(beforeContent)).resolves.toBe('"L"');
  });
});
