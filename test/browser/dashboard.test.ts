import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/audit-log.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { expectCookiesLocked, useChromium, signIn } from '../helpers/chromium.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { screenshotTarget } from '../helpers/screenshots.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const chromium = useChromium();

const dashboard = () => server.urls.dashboard;
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;
const ORG_PAGES = ['members', 'api-keys', 'connections', 'audit', 'settings'] as const;

async function signedIn(user: { email: string; password: string }, next = '/account'): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.goto(`${dashboard()}/sign-in?next=${encodeURIComponent(next)}`);
  await signIn(page, user);
  await page.waitForURL((url) => url.pathname === next);
  return page;
}

/** What a page answers when the browser opens it. */
async function open(page: Page, pathname: string) {
  const response = await page.goto(`${dashboard()}${pathname}`);
  return { status: response!.status(), heading: await page.getByRole('heading', { level: 1 }).first().textContent() };
}

/** Posts a form as the page's own would be (same origin, the session's CSRF token), outside the page. */
async function post(page: Page, pathname: string, form: Record<string, string>) {
  const csrf = await page.locator('input[name="csrf"]').first().inputValue();
  const response = await page.request.post(`${dashboard()}${pathname}`, {
    form: { csrf, ...form },
    headers: { origin: dashboard() },
    maxRedirects: 0,
  });
  return response.status();
}

describe('the dashboard in Chromium, role by role', () => {
  let staff: Staff;
  beforeEach(async () => {
    staff = await createStaff(t.db);
  });

  it('gives Owners and Admins every page of their organization, with its tabs', async () => {
    for (const role of ['owner', 'admin'] as const) {
      const page = await signedIn(staff.users[role]);
      await page.getByRole('link', { name: 'Manage' }).click();
      await expect(
        page
          .getByRole('navigation', { name: /Nonprofit/ })
          .getByRole('link')
          .allTextContents(),
      ).resolves.toEqual([
        'Incoming disbursements',
        'Deposits',
        'Mail',
        'Members',
        'API keys',
        'Webhooks',
        'Connected applications',
        'Audit log',
        'Settings',
      ]);
      for (const tab of ORG_PAGES) {
        const answer = await open(page, `/orgs/${dashed(staff.ein)}/${tab}`);
        expect({ role, tab, status: answer.status }).toEqual({ role, tab, status: 200 });
      }
      await expectCookiesLocked(chromium.context);
      await chromium.context.clearCookies();
    }
  });

  it('shows Members and Read-only users their own account and connections only: the organization pages and their forms are 403', async () => {
    const key = await createApiKey(t.db, { org: staff.ein, environment: 'production' });
    for (const role of ['member', 'read_only'] as const) {
      const page = await signedIn(staff.users[role]);
      await expect(page.getByRole('link', { name: 'Manage' }).count()).resolves.toBe(0);
      await expect(page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link').allTextContents()).resolves.toEqual([
        'Your account',
        'Security',
        'Connected applications',
      ]);
      expect((await open(page, '/oauth/connections')).status).toBe(200);
      for (const tab of ORG_PAGES) {
        const answer = await open(page, `/orgs/${dashed(staff.ein)}/${tab}`);
        expect({ role, tab, status: answer.status, heading: answer.heading }).toEqual({
          role,
          tab,
          status: 403,
          heading: 'Only Owners and Admins manage the organization',
        });
      }
      await page.goto(`${dashboard()}/account`);
      const forms: [string, Record<string, string>][] = [
        [`/orgs/${staff.ein}/members/role`, { user: staff.users.admin.id, role: 'read_only' }],
        [`/orgs/${staff.ein}/members/remove`, { user: staff.users.admin.id }],
        [`/orgs/${staff.ein}/api-keys`, {}],
        [`/orgs/${staff.ein}/api-keys/revoke`, { key: key.id }],
        [`/orgs/${staff.ein}/connections/revoke`, { grant: 'g' }],
        [`/orgs/${staff.ein}/settings`, { require_mfa: 'on' }],
      ];
      for (const [target, form] of forms) expect({ target, status: await post(page, target, form) }).toEqual({ target, status: 403 });
      await chromium.context.clearCookies();
    }
    // Nothing changed.
    expect(
      (await t.db.selectFrom('memberships').select('role').where('user_id', '=', staff.users.admin.id).executeTakeFirstOrThrow()).role,
    ).toBe('admin');
    expect(
      await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', staff.orgId).where('revoked_at', 'is', null).execute(),
    ).toHaveLength(1);
  });

  it('lets an Owner change a role with the select and its button, and remove a member after the confirmation page', async () => {
    // Named as a real organization's staff would be, for the screenshot of the page.
    await t.db.updateTable('organizations').set({ name: 'Riverside Food Pantry' }).where('id', '=', staff.orgId).execute();
    const names = { owner: 'Olivia Okafor', admin: 'Adam Brooks', member: 'Maya Chen', read_only: 'Ravi Patel' } as const;
    for (const role of Object.keys(names) as (keyof typeof names)[])
      await t.db.updateTable('users').set({ display_name: names[role] }).where('id', '=', staff.users[role].id).execute();
    const page = await signedIn(staff.users.owner, `/orgs/${dashed(staff.ein)}/members`);
    await page.getByLabel(`Role of ${staff.users.read_only.email}`).selectOption('member');
    await page
      .getByRole('row', { name: new RegExp(staff.users.read_only.email) })
      .getByRole('button', { name: 'Change role' })
      .click();
    await expect(page.getByRole('status').textContent()).resolves.toBe(`${staff.users.read_only.email} is now Member.`);
    await page
      .getByRole('row', { name: new RegExp(staff.users.member.email) })
      .getByRole('link', { name: 'Remove…' })
      .click();
    await expect(page.getByRole('heading', { level: 2 }).first().textContent()).resolves.toBe(
      `Remove ${staff.users.member.email} from ${(await t.db.selectFrom('organizations').select('name').where('id', '=', staff.orgId).executeTakeFirstOrThrow()).name}?`,
    );
    await page.getByRole('button', { name: 'Remove' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The member was removed.');
    await expect(page.getByRole('row', { name: new RegExp(staff.users.member.email) }).count()).resolves.toBe(0);
    const shot = screenshotTarget('dashboard-members.png');
    await page.setViewportSize({ width: 1240, height: 760 });
    await page.screenshot({ path: shot, fullPage: true });
  });

  it('creates an API key with the button and shows it once, as a person copies it', async () => {
    await t.db.updateTable('organizations').set({ name: 'Riverside Food Pantry' }).where('id', '=', staff.orgId).execute();
    const page = await signedIn(staff.users.admin, `/orgs/${dashed(staff.ein)}/api-keys`);
    await expect(page.getByRole('heading', { name: 'Production API keys' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('Name of the new key').fill('Billing server');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create a production key' }).click()]);
    const key = (await page.getByLabel('The new API key').textContent())!.trim();
    expect(key).toMatch(/^alm_live_[A-Za-z0-9]{32}$/);
    expect(page.url()).not.toContain(key);
    await expect(page.getByRole('status').textContent()).resolves.toContain('Copy it now: it will not be shown again.');
    await expect(page.getByRole('row', { name: /Billing server/ }).isVisible()).resolves.toBe(true);
    const shot = screenshotTarget('dashboard-api-keys.png');
    await page.setViewportSize({ width: 1240, height: 760 });
    await page.screenshot({ path: shot, fullPage: true });
    // A reload neither shows the key again nor makes another (the form is not sent again).
    await page.reload();
    await expect(page.getByText(key).count()).resolves.toBe(0);
    await expect(page.getByRole('status').textContent()).resolves.toContain('A new key is shown only once');
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', staff.orgId).execute()).toHaveLength(1);
    // Revoke asks first, on a page of its own; Cancel changes nothing, Revoke stops the key.
    await Promise.all([
      page.waitForNavigation(),
      page
        .getByRole('row', { name: /Billing server/ })
        .getByRole('link', { name: 'Revoke…' })
        .click(),
    ]);
    await expect(page.getByRole('heading', { level: 2 }).first().textContent()).resolves.toBe('Revoke the key Billing server?');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Cancel' }).click()]);
    expect(
      await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', staff.orgId).where('revoked_at', 'is', null).execute(),
    ).toHaveLength(1);
    await Promise.all([
      page.waitForNavigation(),
      page
        .getByRole('row', { name: /Billing server/ })
        .getByRole('link', { name: 'Revoke…' })
        .click(),
    ]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Revoke' }).click()]);
    await expect(page.getByRole('status').textContent()).resolves.toContain(`The key Billing server (${key.slice(0, 13)}…) is revoked`);
    expect(
      await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', staff.orgId).where('revoked_at', 'is', null).execute(),
    ).toHaveLength(0);
  });

  it('never breaks an audit event’s name inside it, even on a phone', async () => {
    await recordAudit(t.db, {
      event: 'authorization_code.replay',
      environment: 'production',
      organizationId: staff.orgId,
      details: { grant_id: 'g'.repeat(40) },
    });
    await recordAudit(t.db, {
      event: 'membership.role_changed',
      organizationId: staff.orgId,
      actorUserId: staff.users.owner.id,
      details: { user_id: staff.users.member.id, email: staff.users.member.email, role: 'admin' },
    });
    const page = await signedIn(staff.users.owner, `/orgs/${dashed(staff.ein)}/audit`);
    for (const width of [1240, 380]) {
      await page.setViewportSize({ width, height: 800 });
      // An inline element laid out on one line has one box.
      const lines = await page
        .locator('table.audit th code')
        .evaluateAll((codes) => codes.map((code) => [code.textContent, code.getClientRects().length]));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      for (const [event, boxes] of lines) expect({ width, event, boxes }).toEqual({ width, event, boxes: 1 });
    }
  });

  it('forbids framing and runs no script on the organization pages', async () => {
    const page = await signedIn(staff.users.owner);
    for (const pathname of ORG_PAGES.map((tab) => `/orgs/${staff.ein}/${tab}`)) {
      const response = await page.goto(`${dashboard()}${pathname}`);
      const headers = response!.headers();
      expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(headers['content-security-policy']).not.toContain('script-src');
      expect(headers['x-frame-options']).toBe('DENY');
      await expect(page.locator('script').count()).resolves.toBe(0);
    }
  });
});
