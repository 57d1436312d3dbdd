import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCookiesLocked, launchChromium, signIn } from '../helpers/chromium.js';
import { invitationMail } from '../helpers/invitations.js';
import { inviteMember } from '../../src/accounts/invitations.js';
import { TableMailSender } from '../../src/mail/sender.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { screenshotTarget } from '../helpers/screenshots.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

const dashboard = () => server.urls.dashboard;
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;

describe('inviting a colleague, in Chromium', () => {
  it('an Owner invites from the members page; the colleague opens the mailed link in another browser, sets a password, lands signed in, and signs in again with it', async () => {
    const staff = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ name: 'Riverside Food Pantry' }).where('id', '=', staff.orgId).execute();
    const colleague = 'jordan.lee@example.org';
    const inviter = { email: 'maria.ortiz@example.org', password: staff.users.owner.password };
    await t.db.updateTable('users').set({ email: inviter.email }).where('id', '=', staff.users.owner.id).execute();
    const password = 'winter orchard lantern 42';

    // The Owner's browser: the members page's invite form.
    const ownerContext = await browser.newContext();
    const owner = await ownerContext.newPage();
    await owner.goto(`${dashboard()}/sign-in?next=${encodeURIComponent(`/orgs/${dashed(staff.ein)}/members`)}`);
    await signIn(owner, inviter);
    await owner.waitForURL((url) => url.pathname.endsWith('/members'));
    await owner.getByLabel('Email').fill(colleague);
    await owner.getByLabel('Role', { exact: true }).selectOption('member');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await expect(owner.getByRole('status').textContent()).resolves.toContain(`An invitation was sent to ${colleague}.`);
    const pending = owner.getByRole('row', { name: new RegExp(colleague.replace('.', '\\.')) });
    await expect(pending.getByRole('cell').allTextContents()).resolves.toEqual(expect.arrayContaining(['Member', inviter.email]));
    await expect(pending.getByRole('button', { name: 'Revoke' }).isVisible()).resolves.toBe(true);
    const membersShot = screenshotTarget('dashboard-members-invited.png');
    await owner.setViewportSize({ width: 1240, height: 760 });
    await owner.screenshot({ path: membersShot, fullPage: true });

    // The colleague's browser: the link from the mail.
    const { link } = await invitationMail(t.db, colleague);
    const colleagueContext = await browser.newContext();
    const page = await colleagueContext.newPage();
    const opened = await page.goto(link);
    expect(opened!.status()).toBe(200);
    const headers = await opened!.allHeaders();
    expect([headers['referrer-policy'], headers['cache-control'], headers['x-frame-options']]).toEqual(['no-referrer', 'no-store', 'DENY']);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Join Riverside Food Pantry');
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe(colleague);
    await page.getByLabel('Your name').fill('Jordan Lee');
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Password, again').fill(password);
    const shot = screenshotTarget('dashboard-invitation.png');
    await page.getByLabel('Password, again').blur();
    await page.setViewportSize({ width: 1240, height: 860 });
    await page.screenshot({ path: shot, fullPage: true });
    // A password the policy refuses (the browser's own length check aside) is a 400 page saying why, in words.
    await page.getByLabel('Password', { exact: true }).fill('password1234');
    await page.getByLabel('Password, again').fill('password1234');
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('That password is on a list of common passwords');
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Password, again').fill(password);
    await page.getByRole('button', { name: 'Create account and join' }).click();

    // Signed in, on the account page, a Member of the organization.
    await page.waitForURL((url) => url.pathname === '/account');
    await expect(page.getByText(`Signed in as ${colleague}`).isVisible()).resolves.toBe(true);
    await expect(
      page
        .getByRole('row', { name: /Riverside Food Pantry/ })
        .getByRole('cell')
        .allTextContents(),
    ).resolves.toContain('Member');
    await expectCookiesLocked(colleagueContext);
    // The link is spent.
    expect((await page.goto(link))!.status()).toBe(410);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This invitation was already used');

    // Sign out, then sign in with the new password.
    await page.goto(`${dashboard()}/account`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await signIn(page, { email: colleague, password });
    await page.waitForURL((url) => url.pathname === '/account');
    await expect(page.getByText(`Signed in as ${colleague}`).isVisible()).resolves.toBe(true);

    // The Owner's members page now lists the colleague, and no pending invitation.
    await owner.goto(`${dashboard()}/orgs/${dashed(staff.ein)}/members`);
    await expect(
      owner
        .getByRole('row', { name: new RegExp(colleague.replace('.', '\\.')) })
        .getByRole('cell')
        .first()
        .textContent(),
    ).resolves.toContain('Member');
    await expect(owner.getByText('No pending invitations.').isVisible()).resolves.toBe(true);
    await ownerContext.close();
    await colleagueContext.close();
  });

  it('someone with an account: the link asks them to sign in, then Join … as … and Accept; signed in as someone else, the page says whose it is', async () => {
    const staff = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ name: 'Harbor Literacy Project' }).where('id', '=', staff.orgId).execute();
    const other = await createStaff(t.db);
    const guest = other.users.admin;
    // The maker invites an Admin of another organization (the dashboard's form works the same).
    await inviteMember(
      t.db,
      { mail: new TableMailSender(t.db), dashboardOrigins: { production: dashboard(), sandbox: server.urls.sandboxDashboard } },
      { organizationId: staff.orgId, email: guest.email, role: 'admin', environment: 'production', actor: null },
    );
    const { link } = await invitationMail(t.db, guest.email);

    // Signed in as someone else: the page says so, with the address masked, and Sign out.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${dashboard()}/sign-in`);
    await signIn(page, other.users.member);
    await page.waitForURL((url) => url.pathname === '/account');
    expect((await page.goto(link))!.status()).toBe(403);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This invitation is for another account');
    await expect(page.getByText(`${guest.email[0]}•••@example.org`).isVisible()).resolves.toBe(true);
    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();

    // Signed out, the sign-in page returns to the invitation.
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in to accept your invitation');
    await signIn(page, guest);
    await page.waitForURL((url) => url.pathname === new URL(link).pathname);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Join Harbor Literacy Project as Admin');
    const shot = screenshotTarget('dashboard-invitation-accept.png');
    await page.setViewportSize({ width: 1240, height: 760 });
    await page.screenshot({ path: shot, fullPage: true });
    await page.getByRole('button', { name: 'Accept and join' }).click();

    // An Admin now: the organization's members page, where they are listed.
    await page.waitForURL((url) => url.pathname === `/orgs/${dashed(staff.ein)}/members`);
    await expect(page.getByRole('row', { name: new RegExp(`${guest.email}.*you`) }).isVisible()).resolves.toBe(true);
    await context.close();
  });
});
