import * as oauth from 'oauth4webapi';
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { scanQrCode, totpCode } from '../helpers/authenticator.js';
import { useChromium, startAuthorization } from '../helpers/chromium.js';
import { exchangeCode, type AuthorizeResult } from '../helpers/flow.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { saveScreenshot } from '../helpers/screenshots.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const redirectUri = 'https://app.example.org/callback';
const chromium = useChromium();

/** The code a phone shows now, for a step the server has not seen yet (`after`). */
function phoneCode(key: string, after = 0): { code: string; step: number } {
  const step = Math.max(Math.floor(Date.now() / 30000), after + 1);
  return { code: totpCode(key, step), step };
}

async function signInWithPassword(page: Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
}

async function idToken(result: AuthorizeResult, client: { client_id: string; client_secret: string }) {
  const { as, client: c, response } = await exchangeCode(server, 'production', client, result, redirectUri);
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: result.nonce, requireIdToken: true });
  return oauth.getValidatedIdTokenClaims(tokens)!;
}

describe('second factors in Chromium', () => {
  let staff: Staff;
  beforeEach(async () => {
    staff = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ name: 'Riverside Food Pantry' }).where('id', '=', staff.orgId).execute();
  });

  it('sets up an authenticator app at a bank-data consent, then asks for its code at the next sign-in; the ID token says pwd+otp, loa:2', async () => {
    const client = await server.registerClient({
      environment: 'production',
      name: 'Ledgerly Bookkeeping',
      scopes: ['openid', 'read_only', 'read:bank_accounts'],
    });
    const user = staff.users.owner;
    const page = await chromium.context.newPage();
    const first = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read:bank_accounts',
    });
    await signInWithPassword(page, user);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Set up a second factor');
    await expect(page.locator('.lead').textContent()).resolves.toContain('it shares bank-account data');
    await expect(page.getByRole('img', { name: /QR code/ }).isVisible()).resolves.toBe(true);
    await page.setViewportSize({ width: 760, height: 900 });
    await saveScreenshot(page, 'second-factor-setup.png');
    // What the phone's camera sees: the code in its white frame, as the page draws it.
    const scanned = new URL(scanQrCode(await page.locator('figure.qr').screenshot()));

    await page.getByText('Can’t scan it? Enter the key by hand').click();
    const key = (await page.locator('.secret code').textContent())!.trim();
    // The code holds the key typed by hand, for this user, from Almoner's production environment.
    expect(scanned.protocol).toBe('otpauth:');
    expect(scanned.host).toBe('totp');
    expect(scanned.searchParams.get('secret')).toBe(key);
    expect(decodeURIComponent(scanned.pathname)).toContain(user.email);
    expect(scanned.searchParams.get('issuer')).toMatch(/^Almoner/);
    const setup = phoneCode(key);
    await page.getByLabel('Code from your app').fill(setup.code);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Turn on' }).click()]);
    const codes = await page.locator('ul.codes code').allTextContents();
    expect(codes).toHaveLength(10);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Continue to Ledgerly Bookkeeping' }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'Ledgerly Bookkeeping wants access to Riverside Food Pantry',
    );
    await page.getByRole('button', { name: 'Approve' }).click();
    const claims = await idToken({ ...first, callback: await first.callback, browser: undefined as never, consentHtml: '' }, client);
    expect(claims).toMatchObject({ amr: ['pwd', 'otp'], acr: 'urn:almoner:loa:2', sub: user.id });

    // A new browser: the password alone is not enough any more.
    const second = await chromium.browser.newContext();
    const later = await second.newPage();
    const again = await startAuthorization(later, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read:bank_accounts',
    });
    await signInWithPassword(later, user);
    await expect(later.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Enter your second factor');
    await saveScreenshot(later, 'second-factor-code.png');
    await later.getByLabel('Code from your app').fill(phoneCode(key, setup.step).code);
    await later.getByRole('button', { name: 'Verify' }).click();
    // The authorization approved above covers the request: straight back to the application.
    const claimsAgain = await idToken({ ...again, callback: await again.callback, browser: undefined as never, consentHtml: '' }, client);
    expect(claimsAgain).toMatchObject({ amr: ['pwd', 'otp'], acr: 'urn:almoner:loa:2' });
    await second.close();
  });

  it('lays out the setup steps in order: step 2’s words above its QR code, the code inside its frame, at any width', async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${server.urls.dashboard}/sign-in?next=/account/security/authenticator`);
    await signInWithPassword(page, staff.users.member);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Set up an authenticator app');
    for (const width of [1240, 760, 380]) {
      await page.setViewportSize({ width, height: 900 });
      const words = (await page.getByText('Scan this QR code:').boundingBox())!;
      const figure = (await page.locator('figure.qr').boundingBox())!;
      const code = (await page.getByRole('img', { name: /QR code/ }).boundingBox())!;
      const step3 = (await page.getByText('Enter the 6-digit code the app shows to finish.').boundingBox())!;
      // The words end before the figure starts, at the same indent; the figure holds the whole code; step 3 comes after.
      expect({ width, wordsEnd: words.y + words.height <= figure.y }).toEqual({ width, wordsEnd: true });
      expect(Math.abs(words.x - figure.x), `indent at ${width}`).toBeLessThan(2);
      expect({
        width,
        inside:
          code.x >= figure.x &&
          code.y >= figure.y &&
          code.x + code.width <= figure.x + figure.width &&
          code.y + code.height <= figure.y + figure.height,
      }).toEqual({ width, inside: true });
      expect(step3.y, `order at ${width}`).toBeGreaterThan(figure.y + figure.height);
    }
  });

  it('takes a recovery code once on the dashboard and refuses it the second time', async () => {
    const user = staff.users.admin;
    const page = await chromium.context.newPage();
    await page.goto(`${server.urls.dashboard}/sign-in?next=/account/security`);
    await signInWithPassword(page, user);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Security');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Set up an authenticator app' }).click()]);
    const key = (await page.locator('.secret code').textContent())!.trim();
    await page.getByLabel('Code from your app').fill(phoneCode(key).code);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Turn on' }).click()]);
    const codes = await page.locator('ul.codes code').allTextContents();
    await saveScreenshot(page, 'dashboard-recovery-codes.png');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Done' }).click()]);
    await expect(page.getByText('10 of 10 unused').isVisible()).resolves.toBe(true);
    await page.setViewportSize({ width: 1240, height: 800 });
    await saveScreenshot(page, 'dashboard-security.png');

    for (const [round, expected] of [
      [1, 'Your account'],
      [2, 'Enter your second factor'],
    ] as const) {
      const other = await chromium.browser.newContext();
      const p = await other.newPage();
      await p.goto(`${server.urls.dashboard}/sign-in`);
      await signInWithPassword(p, user);
      await p.getByLabel('Code from your app').fill(codes[0]!);
      await Promise.all([p.waitForNavigation(), p.getByRole('button', { name: 'Verify' }).click()]);
      await expect(p.getByRole('heading', { level: 1 }).textContent(), `round ${round}`).resolves.toBe(expected);
      if (round === 2) await expect(p.getByRole('alert').textContent()).resolves.toContain('That recovery code was already used');
      await other.close();
    }
  });
});
