import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { directoryOrganization, fundGrantmaker, pendingDisbursement } from '../helpers/grantmaking.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The dashboard's disbursement pages (docs/accounts.md, "Grantmaking and incoming
 * disbursements"): a grantmaker's members see its balances and disbursements, its Owners and
 * Admins approve and cancel them (CSRF-protected, as `user:<id>`, the second-person setting
 * held); a nonprofit's members see what grantmakers approved for it; the setting itself.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;
let recipientCounter = 0;

/** A grantmaker with one user per role, $1,000.00 in production, and a directory recipient. */
async function grantmaker(): Promise<Staff & { recipientId: string; recipientEin: string }> {
  const s = await createStaff(t.db, { kind: 'grantmaker' });
  await fundGrantmaker(t.db, s.orgId, 'production', 100_000);
  recipientCounter += 1;
  const recipientEin = `8500${String(process.pid % 1000).padStart(3, '0')}${String(recipientCounter).padStart(2, '0')}`;
  return { ...s, recipientEin, recipientId: await directoryOrganization(t.db, recipientEin, `HILLTOP YOUTH CHOIR ${recipientCounter}`) };
}

const apiKeyActor = 'api_key:00000000-0000-4000-8000-000000000001';

async function statusOf(id: string) {
  return t.db.selectFrom('disbursements').select(['status', 'approved_by']).where('id', '=', id).executeTakeFirstOrThrow();
}

describe('the Grantmaking page', () => {
  it('shows an Owner the balances and the disbursements; Approve holds the amount as the user, and the available balance goes down', async () => {
    const g = await grantmaker();
    const id = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId: g.recipientId,
      amount: 25_050,
      createdBy: apiKeyActor,
    });
    const owner = await dashboardSession(server, 'production', g.users.owner);
    const page = await owner.get(`/orgs/${dashed(g.ein)}/grantmaking`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/Current balance<\/dt><dd id="current-balance">\$1,000\.00/);
    expect(page.html).toMatch(/Available balance<\/dt><dd id="available-balance">\$1,000\.00/);
    expect(page.html).toContain(`HILLTOP YOUTH CHOIR ${recipientCounter}`);
    expect(page.html).toContain('$250.50');
    expect(page.html).toContain('Pending approval');

    const approved = await owner.browser.submit(page, '/grantmaking/approve', { disbursement: id });
    expect(approved.url.pathname).toBe(`/orgs/${dashed(g.ein)}/grantmaking`);
    expect(approved.html).toContain('The disbursement is approved.');
    expect(approved.html).toMatch(/Available balance<\/dt><dd id="available-balance">\$749\.50/);
    expect(approved.html).toMatch(/Current balance<\/dt><dd id="current-balance">\$1,000\.00/);
    expect(await statusOf(id)).toEqual({ status: 'submitted', approved_by: `user:${g.users.owner.id}` });
  });

  it('shows Members and Read-only users the page without Approve or Cancel, and answers their posts 403; a post without the CSRF token is 403', async () => {
    const g = await grantmaker();
    const id = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId: g.recipientId,
      amount: 1_000,
      createdBy: apiKeyActor,
    });
    for (const role of ['member', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', g.users[role]);
      const account = await session.get('/account');
      expect(account.html).toContain(`href="/orgs/${dashed(g.ein)}/grantmaking"`);
      const page = await session.get(`/orgs/${dashed(g.ein)}/grantmaking`);
      expect(page.status).toBe(200);
      expect(page.html).toContain('$10.00');
      expect(page.html).not.toContain('/grantmaking/approve');
      expect(page.html).not.toContain('/grantmaking/cancel');
      // Only the tab open to them.
      expect([...page.html.matchAll(/<nav class="tabs"[\s\S]*?<\/nav>/g)][0]![0]).not.toContain('Members');
      for (const action of ['approve', 'cancel']) {
        const post = await session.browser.request(`${session.origin}/orgs/${g.ein}/grantmaking/${action}`, {
          method: 'POST',
          form: { csrf: csrfOf(page.html), disbursement: id },
        });
        expect({ role, action, status: post.status }).toEqual({ role, action, status: 403 });
      }
    }
    const owner = await dashboardSession(server, 'production', g.users.owner);
    const forged = await owner.browser.request(`${owner.origin}/orgs/${g.ein}/grantmaking/approve`, {
      method: 'POST',
      form: { csrf: 'forged', disbursement: id },
    });
    expect(forged.status).toBe(403);
    expect(await statusOf(id)).toEqual({ status: 'pending_approval', approved_by: null });
  });

  it('lets an Admin cancel a pending disbursement; a second approval or cancel is refused on the page (400) saying why', async () => {
    const g = await grantmaker();
    const id = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId: g.recipientId,
      amount: 2_000,
      createdBy: apiKeyActor,
    });
    const admin = await dashboardSession(server, 'production', g.users.admin);
    const page = await admin.get(`/orgs/${g.ein}/grantmaking`);
    const canceled = await admin.browser.submit(page, '/grantmaking/cancel', { disbursement: id });
    expect(canceled.html).toContain('The disbursement is canceled.');
    expect((await statusOf(id)).status).toBe('canceled');
    const again = await admin.browser.submit(page, '/grantmaking/approve', { disbursement: id });
    expect(again.status).toBe(400);
    expect(again.html).toContain('The disbursement is canceled; only a pending_approval one can be approved.');
    const malformed = await admin.browser.submit(page, '/grantmaking/approve', { disbursement: 'nothing' });
    expect(malformed.status).toBe(400);
    expect(malformed.html).toContain('disbursement');
  });

  it('does not let a grantmaker approve another grantmaker’s disbursement (404), nor open the page of another kind of organization (404)', async () => {
    const g = await grantmaker();
    const other = await grantmaker();
    const theirs = await pendingDisbursement(t.db, {
      organizationId: other.orgId,
      environment: 'production',
      recipientId: other.recipientId,
      amount: 500,
      createdBy: apiKeyActor,
    });
    const owner = await dashboardSession(server, 'production', g.users.owner);
    const page = await owner.get(`/orgs/${g.ein}/grantmaking`);
    expect(page.html).not.toContain(theirs);
    const refused = await owner.browser.request(`${owner.origin}/orgs/${g.ein}/grantmaking/approve`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), disbursement: theirs },
    });
    expect(refused.status).toBe(404);
    expect((await statusOf(theirs)).status).toBe('pending_approval');
    const nonprofit = await createStaff(t.db);
    const np = await dashboardSession(server, 'production', nonprofit.users.owner);
    expect((await np.get(`/orgs/${nonprofit.ein}/grantmaking`)).status).toBe(404);
  });

  it('shows the environment’s disbursements only, 25 a page, newest first, with older pages; a bad page start is 400', async () => {
    const g = await grantmaker();
    const ids: string[] = [];
    for (let i = 0; i < 27; i += 1)
      ids.push(
        await pendingDisbursement(t.db, {
          organizationId: g.orgId,
          environment: 'production',
          recipientId: g.recipientId,
          amount: 100 + i,
          createdBy: apiKeyActor,
        }),
      );
    const sandboxOnly = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'sandbox',
      recipientId: g.recipientId,
      amount: 99_999,
      createdBy: apiKeyActor,
    });
    const owner = await dashboardSession(server, 'production', g.users.owner);
    const first = await owner.get(`/orgs/${g.ein}/grantmaking`);
    const shown = (html: string) => [...html.matchAll(/<code>(disbursement_[0-9a-z]{26})<\/code>/g)].map((m) => m[1]);
    expect(shown(first.html)).toEqual(ids.slice(2).reverse());
    expect(first.html).not.toContain(sandboxOnly);
    const older = /href="([^"]+)">Older disbursements/.exec(first.html)![1]!.replace(/&amp;/g, '&');
    const second = await owner.get(older);
    expect(shown(second.html)).toEqual([ids[1], ids[0]]);
    expect(second.html).not.toContain('Older disbursements');
    expect((await owner.get(`/orgs/${g.ein}/grantmaking?before=${sandboxOnly}`)).status).toBe(400);

    const sandbox = await dashboardSession(server, 'sandbox', g.users.owner);
    const inSandbox = await sandbox.get(`/orgs/${g.ein}/grantmaking`);
    expect(shown(inSandbox.html)).toEqual([sandboxOnly]);
    expect(inSandbox.html).toMatch(/Available balance<\/dt><dd id="available-balance">\$0\.00/);
  });
});

describe('disbursements need a second person to approve', () => {
  it('an Owner turns it on (audited); then a user who created a disbursement gets no Approve, and their post is 403; an Admin approves it', async () => {
    const g = await grantmaker();
    const owner = await dashboardSession(server, 'production', g.users.owner);
    const settings = await owner.get(`/orgs/${g.ein}/settings`);
    expect(settings.html).toContain('The creator may approve');
    const saved = await owner.browser.submit(settings, '/settings/disbursement-approvals', { second_approver: 'on' });
    expect(saved.html).toContain('Disbursements now need a second person to approve.');
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'organization.settings_changed')
      .where('organization_id', '=', g.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: g.users.owner.id, details: { require_second_approver: true } });

    const id = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId: g.recipientId,
      amount: 3_000,
      createdBy: `user:${g.users.owner.id}`,
    });
    const page = await owner.get(`/orgs/${g.ein}/grantmaking`);
    expect(page.html).toContain('You created it: another person approves.');
    expect(page.html).not.toContain('/grantmaking/approve');
    const refused = await owner.browser.request(`${owner.origin}/orgs/${g.ein}/grantmaking/approve`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), disbursement: id },
    });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('your organization requires a different person or API key to approve it');
    expect((await statusOf(id)).status).toBe('pending_approval');

    const admin = await dashboardSession(server, 'production', g.users.admin);
    const approved = await admin.browser.submit(await admin.get(`/orgs/${g.ein}/grantmaking`), '/grantmaking/approve', {
      disbursement: id,
    });
    expect(approved.html).toContain('The disbursement is approved.');
    expect(await statusOf(id)).toEqual({ status: 'submitted', approved_by: `user:${g.users.admin.id}` });
  });

  it('is changed by Owners only: an Admin sees it without the form and is 403; a nonprofit has no such setting (404)', async () => {
    const g = await grantmaker();
    const admin = await dashboardSession(server, 'production', g.users.admin);
    const page = await admin.get(`/orgs/${g.ein}/settings`);
    expect(page.html).toContain('Approving disbursements');
    expect(page.html).not.toContain('name="second_approver"');
    const post = await admin.browser.request(`${admin.origin}/orgs/${g.ein}/settings/disbursement-approvals`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), second_approver: 'on' },
    });
    expect(post.status).toBe(403);
    const row = await t.db
      .selectFrom('organizations')
      .select('require_second_approver')
      .where('id', '=', g.orgId)
      .executeTakeFirstOrThrow();
    expect(row.require_second_approver).toBe(false);

    const nonprofit = await createStaff(t.db);
    const np = await dashboardSession(server, 'production', nonprofit.users.owner);
    const npSettings = await np.get(`/orgs/${nonprofit.ein}/settings`);
    expect(npSettings.html).not.toContain('Approving disbursements');
    const npPost = await np.browser.request(`${np.origin}/orgs/${nonprofit.ein}/settings/disbursement-approvals`, {
      method: 'POST',
      form: { csrf: csrfOf(npSettings.html), second_approver: 'on' },
    });
    expect(npPost.status).toBe(404);
  });
});

describe('a nonprofit’s Incoming disbursements', () => {
  it('lists what grantmakers approved for the directory organization of its EIN, with the grantmaker’s name, for every member; not the pending ones', async () => {
    const nonprofit = await createStaff(t.db);
    const recipientId = await directoryOrganization(t.db, nonprofit.ein, 'MEADOW ARTS COLLECTIVE');
    const g = await grantmaker();
    await t.db.updateTable('organizations').set({ name: 'Meadowlark Family Foundation' }).where('id', '=', g.orgId).execute();
    const approvedId = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId,
      amount: 12_345,
      createdBy: apiKeyActor,
    });
    const pendingId = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId,
      amount: 777,
      createdBy: apiKeyActor,
    });
    const admin = await dashboardSession(server, 'production', g.users.admin);
    await admin.browser.submit(await admin.get(`/orgs/${g.ein}/grantmaking`), '/grantmaking/approve', { disbursement: approvedId });

    for (const role of ['owner', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', nonprofit.users[role]);
      const page = await session.get(`/orgs/${nonprofit.ein}/incoming`);
      expect({ role, status: page.status }).toEqual({ role, status: 200 });
      expect(page.html).toContain('Meadowlark Family Foundation');
      expect(page.html).toContain('$123.45');
      expect(page.html).toContain('Submitted');
      expect(page.html).not.toContain('$7.77');
      expect(page.html).not.toContain('<form method="post" action="/orgs');
    }
    expect((await statusOf(pendingId)).status).toBe('pending_approval');
    const owner = await dashboardSession(server, 'production', nonprofit.users.owner);
    // A page starts after one of its own list: a disbursement to someone else is a bad start.
    const elsewhere = await pendingDisbursement(t.db, {
      organizationId: g.orgId,
      environment: 'production',
      recipientId: g.recipientId,
      amount: 100,
      createdBy: apiKeyActor,
    });
    expect((await owner.get(`/orgs/${nonprofit.ein}/incoming?before=${elsewhere}`)).status).toBe(400);
    const gOwner = await dashboardSession(server, 'production', g.users.owner);
    expect((await gOwner.get(`/orgs/${g.ein}/incoming`)).status).toBe(404);
  });

  it('says so when the directory has no organization of the nonprofit’s EIN', async () => {
    const nonprofit = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', nonprofit.users.member);
    const page = await session.get(`/orgs/${nonprofit.ein}/incoming`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('The organizations directory has no organization with EIN');
  });
});
