import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, signIn } from '../helpers/chromium.js';
import { resetLinksFor } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { screenshotTarget } from '../helpers/screenshots.js';

/**
 * Forgot password → reset → old sessions gone, in Chromium as a person does it: signed in in
 * one browser, the password reset from another, the first browser's session ends.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}

const NEW_PASSWORD = 'river stones and lanterns';

describe('password reset in Chromium', () => {
  it('forgot password → link from the mail → new password → sign in with it; the other browser is signed out', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.admin;
    const dashboard = server.urls.dashboard;

    // Browser 1: signed in.
    const first = await newPage();
    await first.goto(`${dashboard}/sign-in?next=/account`);
    await signIn(first, user);
    await first.waitForURL((url) => url.pathname === '/account');

    // Browser 2: forgot the password.
    const second = await newPage();
    await second.goto(`${dashboard}/sign-in`);
    await second.getByRole('link', { name: 'Forgot your password?' }).click();
    await second.waitForURL((url) => url.pathname === '/forgot-password');
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Forgot your password?');
    await second.getByLabel('Email').fill(user.email);
    await second.setViewportSize({ width: 1240, height: 760 });
    await second.screenshot({ path: screenshotTarget('dashboard-forgot-password.png'), fullPage: true });
    await second.getByRole('button', { name: 'Send a reset link' }).click();
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Check your e-mail');
    await expect(second.getByRole('status').textContent()).resolves.toContain('If an account uses that address, we sent a link to it');

    // The link, as the dev mail table holds it.
    const [link] = await resetLinksFor(server, t.db, user.email);
    expect(link).toBeDefined();
    await second.goto(link!);
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Choose a new password');
    await second.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await second.getByLabel('New password again').fill(NEW_PASSWORD);
    await second.screenshot({ path: screenshotTarget('dashboard-reset-password.png'), fullPage: true });
    await second.getByRole('button', { name: 'Set new password' }).click();
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your password was changed');

    // Sign in with the new password from the page's own link.
    await second.getByRole('link', { name: 'Sign in' }).click();
    await signIn(second, { email: user.email, password: NEW_PASSWORD });
    await second.waitForURL((url) => url.pathname === '/account');
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your account');

    // Browser 1's session is gone.
    await first.reload();
    await first.waitForURL((url) => url.pathname === '/sign-in');
    await expect(first.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');

    // The link is spent: the page says so and offers a new one.
    const spent = await second.goto(link!);
    expect(spent!.status()).toBe(410);
    await expect(second.getByRole('link', { name: 'Get a new link' }).isVisible()).resolves.toBe(true);
  });

  it('changes the password from the account page, keeping this browser signed in and signing the other out', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.member;
    const dashboard = server.urls.dashboard;
    const other = await newPage();
    await other.goto(`${dashboard}/sign-in?next=/account`);
    await signIn(other, user);
    await other.waitForURL((url) => url.pathname === '/account');

    const page = await newPage();
    await page.goto(`${dashboard}/sign-in?next=/account`);
    await signIn(page, user);
    await page.waitForURL((url) => url.pathname === '/account');
    await page.getByRole('link', { name: 'Change your password' }).click();
    await page.getByLabel('Current password').fill(user.password);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your password was changed. 1 other session was signed out');
    await page.goto(`${dashboard}/account`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your account');
    await other.reload();
    await other.waitForURL((url) => url.pathname === '/sign-in');
  });
});
