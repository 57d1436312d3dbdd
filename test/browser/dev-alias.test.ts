import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useChromium } from '../helpers/chromium.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A newcomer at the dev default (dashboards at http://127.0.0.1:<port>) adds a passkey without
 * reading the docs: the Security page says where passkeys work, the link leads to the same
 * dashboard at http://localhost:<port> (docs/oauth.md, "Passkeys at the dev default"), and the
 * passkey made there signs in there. Chromium's virtual authenticator plays the fingerprint.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const chromium = useChromium();

async function signInWithPassword(page: Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
}

const heading = async (page: Page) => (await page.getByRole('heading', { level: 1 }).textContent())!.trim();

describe('passkeys at the dev default, in Chromium', () => {
  it('follows the Security page’s link to the localhost dashboard, adds a passkey there and signs in with it', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.admin;
    const alias = server.urls.dashboard.replace('127.0.0.1', 'localhost');
    const page = await chromium.context.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    await page.goto(`${server.urls.dashboard}/sign-in?next=/account/security`);
    await signInWithPassword(page, user);
    expect(await heading(page)).toBe('Security');
    await expect(page.getByRole('button', { name: 'Add a passkey' }).count()).resolves.toBe(0);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: alias }).click()]);
    expect(new URL(page.url()).origin).toBe(alias);
    // Another origin, another browser session: sign in once more, back to Security.
    await signInWithPassword(page, user);
    expect(await heading(page)).toBe('Security');
    await page.getByLabel('Name of the new passkey').fill('Dev laptop');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Add a passkey' }).click()]);
    expect(await heading(page)).toBe('Your passkey is ready');
    const stored = await t.db.selectFrom('webauthn_credentials').select(['name', 'rp_id']).where('user_id', '=', user.id).execute();
    expect(stored).toEqual([{ name: 'Dev laptop', rp_id: 'localhost' }]);

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Done' }).click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
    await page.goto(`${alias}/sign-in`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
    expect(await heading(page)).toBe('Your account');
    expect(new URL(page.url()).origin).toBe(alias);
  });
});
