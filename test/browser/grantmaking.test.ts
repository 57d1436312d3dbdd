import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { signIn, useChromium } from '../helpers/chromium.js';
import { apiRequest } from '../helpers/gateway.js';
import { directoryOrganization, fundGrantmaker, pendingDisbursement } from '../helpers/grantmaking.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The dashboard's disbursement pages in Chromium (docs/accounts.md, "Grantmaking and incoming
 * disbursements"): a grantmaker's Owner sees the disbursements account's balances, approves a
 * disbursement an API key created and sees the available balance go down; with "disbursements
 * need a second person to approve" turned on, the Owner is not offered the approval of one they
 * created, and an Admin approves it; the nonprofit paid sees it among its incoming disbursements.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const chromium = useChromium();
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;

async function signedIn(user: { email: string; password: string }): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.goto(`${server.urls.dashboard}/sign-in?next=/account`);
  await signIn(page, user);
  await page.waitForURL((url) => url.pathname === '/account');
  return page;
}

async function click(page: Page, locator: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForNavigation({ timeout: 15_000 }), locator.click()]);
}

const balances = async (page: Page) => [
  (await page.locator('#current-balance').textContent())!.trim(),
  (await page.locator('#available-balance').textContent())!.trim(),
];

/** A nonprofit whose EIN the directory lists, and a grantmaker with $2,500.00 to pay it from (production). */
async function setting() {
  const nonprofit = await createStaff(t.db);
  const recipientId = await directoryOrganization(t.db, nonprofit.ein, 'WILLOW CREEK FOOD BANK');
  const grantmaker = await createStaff(t.db, { kind: 'grantmaker' });
  await t.db.updateTable('organizations').set({ name: 'Willow Creek Community Fund' }).where('id', '=', grantmaker.orgId).execute();
  await fundGrantmaker(t.db, grantmaker.orgId, 'production', 250_000);
  return { nonprofit, grantmaker, recipientId };
}

describe('grantmaking in the browser', () => {
  it('an Owner approves a disbursement an API key created, the available balance goes down, and the nonprofit sees it coming', async () => {
    const { nonprofit, grantmaker, recipientId } = await setting();
    const key = await createApiKey(t.db, { org: grantmaker.ein, environment: 'production' });
    const created = await apiRequest(server, 'production', 'POST', '/v1/disbursements', {
      bearer: key.key,
      json: { organization_id: recipientId, amount: 60_000, transactions: [{ amount: 60_000, type: 'donor_advised_fund_grant' }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const page = await signedIn(grantmaker.users.owner);
    await click(page, page.getByRole('link', { name: 'Manage' }));
    await click(page, page.getByRole('navigation', { name: 'Willow Creek Community Fund' }).getByRole('link', { name: 'Grantmaking' }));
    await expect(balances(page)).resolves.toEqual(['$2,500.00', expect.stringMatching(/^\$2,500\.00/)]);
    const row = page.getByRole('row', { name: /WILLOW CREEK FOOD BANK/ });
    await expect(row.textContent()).resolves.toMatch(/\$600\.00.*Pending approval/s);
    await click(page, row.getByRole('button', { name: 'Approve' }));
    await expect(page.getByRole('status').textContent()).resolves.toContain('The disbursement is approved.');
    await expect(balances(page)).resolves.toEqual(['$2,500.00', expect.stringMatching(/^\$1,900\.00/)]);
    await expect(page.getByRole('row', { name: /WILLOW CREEK FOOD BANK/ }).textContent()).resolves.toMatch(/Submitted/);
    await expect(
      page
        .getByRole('row', { name: /WILLOW CREEK FOOD BANK/ })
        .getByRole('button')
        .count(),
    ).resolves.toBe(0);
    const got = await apiRequest(server, 'production', 'GET', `/v1/disbursements/${created.body.id as string}`, { bearer: key.key });
    // The API answers it approved too, by the Owner's address (the published approval.approved_by).
    expect(got.body).toMatchObject({
      status: 'submitted',
      approval: { approved_by: grantmaker.users.owner.email, approved_at: expect.any(String) },
    });

    await chromium.context.clearCookies();
    const member = await signedIn(nonprofit.users.member);
    await click(member, member.getByRole('link', { name: /^Disbursements/ }));
    expect(new URL(member.url()).pathname).toBe(`/orgs/${dashed(nonprofit.ein)}/incoming`);
    const incoming = member.getByRole('row', { name: /Willow Creek Community Fund/ });
    await expect(incoming.textContent()).resolves.toMatch(/\$600\.00.*Submitted/s);
  });

  it('with a second person required, the Owner is not offered the approval of one they created; an Admin approves it', async () => {
    const { grantmaker, recipientId } = await setting();
    const owner = await signedIn(grantmaker.users.owner);
    await owner.goto(`${server.urls.dashboard}/orgs/${dashed(grantmaker.ein)}/settings`);
    await owner.getByLabel('Disbursements need a second person to approve').check();
    await click(owner, owner.getByRole('region', { name: 'Approving disbursements' }).getByRole('button', { name: 'Save' }));
    await expect(owner.getByRole('status').textContent()).resolves.toContain('Disbursements now need a second person to approve.');

    // No form creates disbursements in the dashboard: the Owner's own, through the service, as the dashboard records a user.
    await pendingDisbursement(t.db, {
      organizationId: grantmaker.orgId,
      environment: 'production',
      recipientId,
      amount: 30_000,
      createdBy: `user:${grantmaker.users.owner.id}`,
    });
    await owner.goto(`${server.urls.dashboard}/orgs/${dashed(grantmaker.ein)}/grantmaking`);
    const own = owner.getByRole('row', { name: /WILLOW CREEK FOOD BANK/ });
    await expect(own.textContent()).resolves.toContain('You created it: another person approves.');
    await expect(own.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await expect(own.getByRole('button', { name: 'Cancel' }).count()).resolves.toBe(1);

    await chromium.context.clearCookies();
    const admin = await signedIn(grantmaker.users.admin);
    await admin.goto(`${server.urls.dashboard}/orgs/${dashed(grantmaker.ein)}/grantmaking`);
    await click(admin, admin.getByRole('row', { name: /WILLOW CREEK FOOD BANK/ }).getByRole('button', { name: 'Approve' }));
    await expect(admin.getByRole('status').textContent()).resolves.toContain('The disbursement is approved.');
    await expect(balances(admin)).resolves.toEqual(['$2,500.00', expect.stringMatching(/^\$2,200\.00/)]);
  });
});
