import { describe, expect, it } from 'vitest';
import { removeMembership } from '../../src/accounts/memberships.js';
import { recordAudit } from '../../src/audit/audit-log.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

/** The events listed on an audit page, as `event actor` strings in page order. */
const listed = (html: string) =>
  [...html.matchAll(/<th scope="row"><code>([^<]+)<\/code>[\s\S]*?<td>([^<]*)</g)].map((m) => `${m[1]} ${m[2]!.trim()}`);
const link = (html: string, label: string) => new RegExp(`<a href="([^"]+)">${label}</a>`).exec(html)?.[1]?.replace(/&amp;/g, '&');

describe("an organization's audit log", () => {
  it("shows the organization's events only, newest first, 50 a page, with links to older and newest", async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    for (let i = 0; i < 120; i += 1)
      await recordAudit(t.db, {
        event: 'api_key.created',
        organizationId: s.orgId,
        actorUserId: s.users.admin.id,
        details: { id: `key_${i}` },
      });
    await recordAudit(t.db, {
      event: 'api_key.created',
      organizationId: other.orgId,
      actorUserId: other.users.admin.id,
      details: { id: 'key_theirs' },
    });
    const session = await dashboardSession(server, 'production', s.users.owner);
    const first = await session.get(`/orgs/${s.ein}/audit`);
    expect(first.status).toBe(200);
    expect(first.html).toContain('key_119');
    expect(first.html).not.toContain('key_theirs');
    expect(first.html).not.toContain(other.users.admin.email);
    expect(listed(first.html).filter((e) => e.startsWith('api_key.created'))).toHaveLength(50);
    expect(link(first.html, '← Newest')).toBeUndefined();
    const second = await session.get(link(first.html, 'Older events →')!);
    expect(second.html).toContain('key_69');
    expect(second.html).not.toContain('key_70<');
    const third = await session.get(link(second.html, 'Older events →')!);
    expect(link(third.html, 'Older events →')).toBeUndefined();
    expect(third.html).toContain('key_0<');
    expect(link(third.html, '← Newest')).toBe(`/orgs/${s.ein.slice(0, 2)}-${s.ein.slice(2)}/audit`);
  });

  it('filters by who acted, by event and by days, and says when nothing matches', async () => {
    const s = await createStaff(t.db);
    await recordAudit(t.db, {
      event: 'membership.role_changed',
      organizationId: s.orgId,
      actorUserId: s.users.owner.id,
      details: { email: s.users.member.email, role: 'admin' },
    });
    await recordAudit(t.db, { event: 'api_key.revoked', organizationId: s.orgId, actorUserId: s.users.admin.id, details: { id: 'key_r' } });
    await t.db
      .insertInto('audit_events')
      .values({
        event: 'api_key.created',
        organization_id: s.orgId,
        actor_user_id: s.users.admin.id,
        occurred_at: new Date('2025-03-10T12:00:00Z'),
        details: JSON.stringify({ id: 'key_old' }),
      })
      .execute();
    const session = await dashboardSession(server, 'production', s.users.admin);
    const byActor = await session.get(`/orgs/${s.ein}/audit?actor=${encodeURIComponent(s.users.owner.email.toUpperCase())}`);
    expect(listed(byActor.html)).toEqual([`membership.role_changed ${s.users.owner.email}`]);
    const byEvent = await session.get(`/orgs/${s.ein}/audit?event=api_key.revoked`);
    expect(listed(byEvent.html)).toEqual([`api_key.revoked ${s.users.admin.email}`]);
    const byDays = await session.get(`/orgs/${s.ein}/audit?from=2025-03-10&to=2025-03-10`);
    expect(listed(byDays.html)).toEqual([`api_key.created ${s.users.admin.email}`]);
    const nobody = await session.get(`/orgs/${s.ein}/audit?actor=nobody@example.org`);
    expect(nobody.html).toContain('No event matches these filters.');
  });

  it('answers malformed filters with a 400 page that says which, and a Member with 403', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const bad = await session.get(`/orgs/${s.ein}/audit?from=2025-02-30&actor=not-an-address&event=${encodeURIComponent("x' or 1=1")}`);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('is not an e-mail address');
    expect(bad.html).toContain('“From” must be a date');
    expect(bad.html).toContain('Choose an event of the list.');
    const member = await dashboardSession(server, 'production', s.users.member);
    expect((await member.get(`/orgs/${s.ein}/audit`)).status).toBe(403);
  });

  it('filters by any kind the product records, with no row of it yet: an empty list with the kind chosen (a bookmarked filter keeps working)', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const none = await session.get(`/orgs/${s.ein}/audit?event=webhook.paused`);
    expect(none.status, none.html).toBe(200);
    expect(none.html).toContain('No event matches these filters.');
    expect(none.html).toContain('<option value="webhook.paused" selected>webhook.paused</option>');
    expect(none.html).not.toContain('Choose an event of the list.');
    const unknown = await session.get(`/orgs/${s.ein}/audit?event=webhook.exploded`);
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('Choose an event of the list.');
    expect(unknown.html).not.toContain('<option value="webhook.exploded"');
  });

  it('names applications and people instead of their ids, no more than the organization may see', async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    await t.db.updateTable('users').set({ display_name: 'Maya Chen' }).where('id', '=', s.users.member.id).execute();
    await t.db.updateTable('users').set({ display_name: 'Otto Outsider' }).where('id', '=', other.users.member.id).execute();
    const app = await server.registerClient({ environment: 'production', name: 'Ledgerly Bookkeeping' });
    await recordAudit(t.db, {
      event: 'consent.granted',
      environment: 'production',
      organizationId: s.orgId,
      actorUserId: s.users.owner.id,
      clientId: app.client_id,
      details: { grant_id: 'grant-kept-as-is', scopes: ['read_only'] },
    });
    // The same id in the other environment is not that application.
    await recordAudit(t.db, {
      event: 'authorization.revoked',
      environment: 'sandbox',
      organizationId: s.orgId,
      clientId: app.client_id,
      details: { grant_id: 'grant-sandbox' },
    });
    await recordAudit(t.db, {
      event: 'membership.role_changed',
      organizationId: s.orgId,
      actorUserId: s.users.owner.id,
      details: { user_id: s.users.member.id, email: s.users.member.email, role: 'admin', previous_role: 'member' },
    });
    // Someone removed since: the address the event recorded, nothing more.
    await t.db.updateTable('users').set({ display_name: 'Rita Removed' }).where('id', '=', s.users.read_only.id).execute();
    await removeMembership(t.db, { organizationId: s.orgId, userId: s.users.read_only.id, actor: null });
    // An id of someone who is not in the organization, with no address recorded: nobody is named.
    await recordAudit(t.db, {
      event: 'authorization.revoked',
      organizationId: s.orgId,
      details: { user_id: other.users.member.id, reason: 'user_disabled' },
    });
    await recordAudit(t.db, {
      event: 'membership.role_changed',
      organizationId: s.orgId,
      details: { user_id: 'not-a-uuid', role: 'member' },
    });

    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/audit`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<li><span>application</span> Ledgerly Bookkeeping</li>');
    expect(page.html).toContain(`<li><span>client</span> ${app.client_id}</li>`);
    expect(page.html).toContain('<li><span>grant_id</span> grant-kept-as-is</li>');
    expect(page.html).toContain(`<li><span>user</span> ${s.users.member.email} · Maya Chen</li>`);
    expect(page.html).not.toContain(s.users.member.id);
    expect(page.html).toContain(`<li><span>user</span> ${s.users.read_only.email} (not a member now)</li>`);
    expect(page.html).not.toContain('Rita Removed');
    expect(page.html).not.toContain(s.users.read_only.id);
    expect(page.html).toContain('<li><span>user</span> a former member</li>');
    expect(page.html).not.toContain(other.users.member.email);
    expect(page.html).not.toContain('Otto Outsider');
    expect(page.html).toContain('<li><span>user_id</span> not-a-uuid</li>');
  });
});
