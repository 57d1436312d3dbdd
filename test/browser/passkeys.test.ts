import * as oauth from 'oauth4webapi';
import type { CDPSession, Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { useChromium, startAuthorization } from '../helpers/chromium.js';
import { exchangeCode, type AuthorizeResult } from '../helpers/flow.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { saveScreenshot } from '../helpers/screenshots.js';

/**
 * Passkeys as a person uses them (docs/oauth.md, "Second factors and step-up"), in Chromium
 * with its virtual authenticator (CDP WebAuthn domain): added on the Security page, then
 * signing in alone, as the second factor after a password, and at a step-up; removed with
 * the password. The dashboards are at http://localhost:<port>, as WebAuthn needs a name.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0, dashboardsAtLocalhost: true });
const redirectUri = 'https://app.example.org/callback';
const chromium = useChromium();

interface Authenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/** A platform authenticator in `page` that verifies its user (a fingerprint, say) without asking. */
async function addAuthenticator(page: Page): Promise<Authenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** The same passkeys on another device: copies every credential of `from` into `to`. */
async function copyPasskeys(from: Authenticator, to: Authenticator): Promise<void> {
  const { credentials } = await from.cdp.send('WebAuthn.getCredentials', { authenticatorId: from.authenticatorId });
  for (const credential of credentials) await to.cdp.send('WebAuthn.addCredential', { authenticatorId: to.authenticatorId, credential });
}

async function signInWithPassword(page: Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
}

async function heading(page: Page): Promise<string> {
  return (await page.getByRole('heading', { level: 1 }).textContent())!.trim();
}

async function idToken(result: Omit<AuthorizeResult, 'browser' | 'consentHtml'>, client: { client_id: string; client_secret: string }) {
  const {
    as,
    client: c,
    response,
  } = await exchangeCode(server, 'production', client, { ...result, browser: undefined as never, consentHtml: '' }, redirectUri);
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: result.nonce, requireIdToken: true });
  return oauth.getValidatedIdTokenClaims(tokens)!;
}

/** Signs in on the dashboard with the password and adds a passkey named `name` on the Security page. */
async function addPasskey(page: Page, user: { email: string; password: string }, name: string): Promise<Authenticator> {
  const authenticator = await addAuthenticator(page);
  await page.goto(`${server.urls.dashboard}/sign-in?next=/account/security`);
  await signInWithPassword(page, user);
  expect(await heading(page)).toBe('Security');
  await page.getByLabel('Name of the new passkey').fill(name);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Add a passkey' }).click()]);
  return authenticator;
}

async function signOut(page: Page) {
  // The bar's button (the Security page also lists its sessions, each with a Sign out of its own).
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
}

/** "Confirm it is you" with the passkey, as changing one's second factors asks once a factor exists. */
async function confirmWithPasskey(page: Page) {
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Confirm it is you' }).click()]);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Use a passkey' }).click()]);
}

describe('passkeys in Chromium', () => {
  let staff: Staff;
  beforeEach(async () => {
    staff = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ name: 'Riverside Food Pantry' }).where('id', '=', staff.orgId).execute();
  });

  it('adds a passkey on the Security page (recovery codes come with it), then signs in with it alone on the dashboard and in an FDX authorization (amr hwk, loa:2), and after the password when the application asks to sign in again (amr pwd+hwk)', async () => {
    const user = staff.users.owner;
    const page = await chromium.context.newPage();
    await addPasskey(page, user, 'Work laptop');
    expect(await heading(page)).toBe('Your passkey is ready');
    expect(await page.locator('ul.codes code').allTextContents()).toHaveLength(10);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Done' }).click()]);
    await expect(page.getByRole('row', { name: /Work laptop/ }).isVisible()).resolves.toBe(true);
    await expect(page.getByText('10 of 10 unused').isVisible()).resolves.toBe(true);
    await page.setViewportSize({ width: 1240, height: 900 });
    await saveScreenshot(page, 'dashboard-passkeys.png');

    const stored = await t.db.selectFrom('webauthn_credentials').selectAll().where('user_id', '=', user.id).execute();
    expect(stored.map((row) => ({ name: row.name, device_type: row.device_type }))).toEqual([
      { name: 'Work laptop', device_type: 'singleDevice' },
    ]);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['event', 'details'])
      .where('actor_user_id', '=', user.id)
      .where('event', '=', 'second_factor.added')
      .execute();
    expect(audit).toEqual([{ event: 'second_factor.added', details: { method: 'passkey', name: 'Work laptop' } }]);
    await server.runtime.background.drain();
    const notices = await t.db.selectFrom('outbound_mail').select(['subject', 'body']).where('recipient', '=', user.email).execute();
    expect(notices.map((n) => n.subject)).toEqual(['A second factor was added to your Almoner account']);
    expect(notices[0]!.body).toContain('a passkey (“Work laptop”)');

    // Signed out, the passkey alone signs back in: no email, no password.
    await signOut(page);
    await page.goto(`${server.urls.dashboard}/sign-in`);
    await page.setViewportSize({ width: 760, height: 900 });
    await saveScreenshot(page, 'sign-in-passkey.png');
    const answer = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/sign-in/passkey'));
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
    expect(await heading(page)).toBe('Your account');
    // The same signed answer sent again with the very cookies it came with is refused: its challenge is used up.
    const original = await answer;
    const replay = await fetch(original.url(), {
      method: 'POST',
      redirect: 'manual',
      headers: { ...(await original.allHeaders()) },
      body: original.postData()!,
    });
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain('That passkey did not sign you in');
    const session = await t.db
      .selectFrom('oidc_models')
      .select('payload')
      .where('model', '=', 'Session')
      .where((eb) => eb(eb.ref('payload', '->>').key('accountId'), '=', user.id))
      .executeTakeFirstOrThrow();
    expect((session.payload as { amr?: string[] }).amr).toEqual(['hwk']);
    const used = await t.db
      .selectFrom('webauthn_credentials')
      .select(['last_used_at'])
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(used.last_used_at).not.toBeNull();

    // An application asking for bank data: the passkey is both factors, so no step-up follows.
    await signOut(page);
    const client = await server.registerClient({
      environment: 'production',
      name: 'Ledgerly Bookkeeping',
      scopes: ['openid', 'read_only', 'read:bank_accounts'],
    });
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read:bank_accounts',
    });
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
    expect(await heading(page)).toContain('Ledgerly Bookkeeping wants access to Riverside Food Pantry');
    await page.getByRole('button', { name: 'Approve' }).click();
    const claims = await idToken({ ...flow, callback: await flow.callback }, client);
    expect(claims).toMatchObject({ sub: user.id, amr: ['hwk'], acr: 'urn:almoner:loa:2' });

    // The application asks to sign in again (prompt=login) and the password is typed: the flow asks for the passkey next.
    const again = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read:bank_accounts',
      extraParams: { prompt: 'login' },
    });
    await signInWithPassword(page, user);
    expect(await heading(page)).toBe('Enter your second factor');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    expect(await idToken({ ...again, callback: await again.callback }, client)).toMatchObject({
      sub: user.id,
      amr: ['pwd', 'hwk'],
      acr: 'urn:almoner:loa:2',
    });
  });

  it('asks for the passkey after the password, takes it at a step-up (amr pwd+hwk), and refuses a copy whose signature count went back', async () => {
    const user = staff.users.admin;
    const client = await server.registerClient({
      environment: 'production',
      name: 'Ledgerly Bookkeeping',
      scopes: ['openid', 'read_only', 'read:bank_accounts'],
    });

    // A second device signs in to the application with the password only, before any passkey exists.
    const phoneContext = await chromium.browser.newContext();
    const phone = await phoneContext.newPage();
    const phoneAuthenticator = await addAuthenticator(phone);
    const readOnly = await startAuthorization(phone, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read_only',
    });
    await signInWithPassword(phone, user);
    await phone.getByRole('button', { name: 'Approve' }).click();
    expect((await idToken({ ...readOnly, callback: await readOnly.callback }, client)).amr).toEqual(['pwd']);

    // The passkey is made on the laptop.
    const laptop = await chromium.context.newPage();
    const laptopAuthenticator = await addPasskey(laptop, user, 'Laptop');

    // On the laptop, signed out: the password is now followed by the passkey.
    await signOut(laptop);
    await laptop.goto(`${server.urls.dashboard}/sign-in`);
    await signInWithPassword(laptop, user);
    expect(await heading(laptop)).toBe('Enter your second factor');
    await expect(laptop.locator('.lead').textContent()).resolves.toContain('Use your passkey, or enter one of your recovery codes');
    await laptop.setViewportSize({ width: 760, height: 900 });
    await saveScreenshot(laptop, 'second-factor-passkey.png');
    await Promise.all([laptop.waitForNavigation(), laptop.getByRole('button', { name: 'Use a passkey' }).click()]);
    expect(await heading(laptop)).toBe('Your account');
    const session = await t.db
      .selectFrom('oidc_models')
      .select('payload')
      .where('model', '=', 'Session')
      .where((eb) => eb(eb.ref('payload', '->>').key('accountId'), '=', user.id))
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    expect((session.payload as { amr?: string[] }).amr).toEqual(['pwd', 'hwk']);

    // The passkey syncs to the phone (its signature count with it: an older copy would be refused as a clone).
    await copyPasskeys(laptopAuthenticator, phoneAuthenticator);

    // The phone's password session now asks bank data: the step-up takes the passkey.
    const fdx = await startAuthorization(phone, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read:bank_accounts',
    });
    expect(await heading(phone)).toBe('Confirm it is you');
    await expect(phone.locator('.lead').textContent()).resolves.toContain('it shares bank-account data');
    await Promise.all([phone.waitForNavigation(), phone.getByRole('button', { name: 'Use a passkey' }).click()]);
    expect(await heading(phone)).toContain('Ledgerly Bookkeeping wants access');
    await phone.getByRole('button', { name: 'Approve' }).click();
    expect(await idToken({ ...fdx, callback: await fdx.callback }, client)).toMatchObject({
      amr: ['pwd', 'hwk'],
      acr: 'urn:almoner:loa:2',
    });
    await phoneContext.close();

    // The laptop's copy now has an older signature count than the server saw from the phone:
    // treated as a cloned authenticator, it is refused.
    await signOut(laptop);
    await laptop.goto(`${server.urls.dashboard}/sign-in`);
    await signInWithPassword(laptop, user);
    await Promise.all([laptop.waitForNavigation(), laptop.getByRole('button', { name: 'Use a passkey' }).click()]);
    expect(await heading(laptop)).toBe('Enter your second factor');
    await expect(laptop.getByRole('alert').textContent()).resolves.toContain('That passkey did not work');
  });

  it('removes a passkey with the password typed again; with no second factor left, the recovery codes go too', async () => {
    const user = staff.users.member;
    const page = await chromium.context.newPage();
    await addPasskey(page, user, 'Security key');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Done' }).click()]);
    await confirmWithPasskey(page);
    expect(await heading(page)).toBe('Security');

    await page.getByLabel('Your password', { exact: true }).first().fill('not my password');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Remove the passkey' }).click()]);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('That is not your password. The passkey is still there.');
    expect(await t.db.selectFrom('webauthn_credentials').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);

    await page.locator('#passkey-remove-password').fill(user.password);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Remove the passkey' }).click()]);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('The passkey is removed');
    expect(await t.db.selectFrom('webauthn_credentials').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute()).toEqual([]);
    await expect(page.getByText('You get recovery codes when you set up an authenticator app or a passkey').isVisible()).resolves.toBe(
      true,
    );
  });
});
