import { describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { formatEin } from '../../src/accounts/ein.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const REDIRECT = 'https://app.example.org/callback';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

describe("an organization's connected applications", () => {
  it('lists every application with access to the organization; Owners and Admins revoke what belongs to it, not what acts as a member', async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    const orgClient = await server.registerClient({
      environment: 'production',
      name: 'Ledger Sync',
      redirectUris: [REDIRECT],
      scopes: ['read_only'],
      subjectType: 'organization',
    });
    const userClient = await server.registerClient({
      environment: 'production',
      name: 'Personal Reports',
      redirectUris: [REDIRECT],
      scopes: ['read_only'],
    });
    const orgGrant = await obtainTokens(server, {
      environment: 'production',
      client: orgClient,
      clientId: orgClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: s.users.admin,
    });
    const memberGrant = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: s.users.member,
    });
    const othersGrant = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: other.users.member,
    });

    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/connections`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Ledger Sync');
    expect(page.html).toContain('Personal Reports');
    expect(page.html).toContain(s.users.member.email);
    const revocable = [...page.html.matchAll(/href="\/orgs\/[^"]+\/connections\/([^"/]+)\/revoke"/g)].map((m) => m[1]);
    expect(revocable).toHaveLength(1); // the organization's access only

    const grantOf = async (email: string, clientId: string) =>
      (
        await t.db
          .selectFrom('oauth_authorizations as a')
          .innerJoin('users as u', 'u.id', 'a.user_id')
          .select('a.grant_id')
          .where('u.email', '=', email)
          .where('a.client_id', '=', clientId)
          .executeTakeFirstOrThrow()
      ).grant_id;
    const revoke = (grant: string) =>
      session.browser.request(`${session.origin}/orgs/${s.ein}/connections/revoke`, {
        method: 'POST',
        form: { csrf: csrfOf(page.html), grant },
      });

    // What acts as a member is theirs to revoke: 403, nothing changed.
    const refused = await revoke(await grantOf(s.users.member.email, userClient.client_id));
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('Only the member who approved it can revoke this access');
    expect(
      (
        await tokenRequest(server, 'production', userClient, {
          grant_type: 'refresh_token',
          refresh_token: memberGrant.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);
    // Another organization's authorization does not exist here.
    expect((await revoke(await grantOf(other.users.member.email, userClient.client_id))).status).toBe(404);
    expect(
      (
        await tokenRequest(server, 'production', userClient, {
          grant_type: 'refresh_token',
          refresh_token: othersGrant.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);

    const revoked = await revoke(await grantOf(s.users.admin.email, orgClient.client_id));
    expect(revoked.status).toBe(200);
    expect(revoked.html).toContain(`Ledger Sync no longer has access to`);
    expect(
      (
        await tokenRequest(server, 'production', orgClient, {
          grant_type: 'refresh_token',
          refresh_token: orgGrant.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(401);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'authorization.revoked')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: s.users.owner.id, details: { subject_type: 'organization', via: 'organization_page' } });
  });

  it("Revoke on the organization's page asks first, on a page of its own: the page ends nothing, its form carries the CSRF token; /oauth/connections keeps its one-step button", async () => {
    const s = await createStaff(t.db);
    const orgClient = await server.registerClient({
      environment: 'production',
      name: 'Grant Tracker',
      redirectUris: [REDIRECT],
      scopes: ['read_only'],
      subjectType: 'organization',
    });
    const granted = await obtainTokens(server, {
      environment: 'production',
      client: orgClient,
      clientId: orgClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: s.users.admin,
    });
    // Whether the access token still works (introspection, which changes nothing).
    const live = async () =>
      (await introspect(server, 'production', orgClient, granted.tokens.body.access_token as string)).body.active === true;
    const grant = (
      await t.db
        .selectFrom('oauth_authorizations')
        .select('grant_id')
        .where('client_id', '=', orgClient.client_id)
        .executeTakeFirstOrThrow()
    ).grant_id;
    const session = await dashboardSession(server, 'production', s.users.owner);
    const ein = formatEin(s.ein); // as the pages write it
    const list = `/orgs/${ein}/connections`;
    const confirmation = `/orgs/${ein}/connections/${grant}/revoke`;
    const action = `/orgs/${ein}/connections/revoke`;
    // The organization's list links to the question; it has no form that revokes.
    const listed = await session.get(list);
    expect(listed.html).toContain(`href="${confirmation}"`);
    expect(listed.html).not.toContain(`action="${action}"`);
    const asked = await session.get(confirmation);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('Revoke Grant Tracker’s access to');
    expect(asked.html).toContain('every token it holds stops working');
    expect(asked.html).toContain(`<form method="post" action="${action}">`);
    expect(asked.html).toContain(`name="grant" value="${grant}"`);
    expect(asked.html).toMatch(/name="csrf" value="[^"]+"/);
    expect(asked.html).toContain(`href="${list}"`); // Cancel
    // /oauth/connections keeps its one-step Revoke button, a fixed interface (docs/oauth.md).
    const own = await session.get('/oauth/connections');
    expect(own.html).toContain('<form method="post" action="/oauth/connections/revoke">');
    expect(own.html).toMatch(/<button type="submit" class="danger"[^>]*>Revoke<\/button>/);
    expect(await live()).toBe(true);
    // The form without its token (a cross-site post) is refused and ends nothing.
    const forged = await session.browser.request(`${session.origin}/orgs/${s.ein}/connections/revoke`, { method: 'POST', form: { grant } });
    expect(forged.status).toBe(403);
    expect(await live()).toBe(true);
    const done = await session.browser.submit(await session.get(`/orgs/${s.ein}/connections/${grant}/revoke`), '/connections/revoke');
    expect(done.url.pathname).toBe(`/orgs/${ein}/connections`);
    expect(done.html).toContain('Grant Tracker no longer has access to');
    expect(await live()).toBe(false);
    // Once revoked, the question is not asked again: back to the list.
    expect((await session.get(`/orgs/${s.ein}/connections/${grant}/revoke`)).url.pathname).toBe(`/orgs/${ein}/connections`);
    // Another organization's access has no such page here.
    const other = await createStaff(t.db);
    const theirs = await dashboardSession(server, 'production', other.users.owner);
    expect((await theirs.get(`/orgs/${other.ein}/connections/${grant}/revoke`)).status).toBe(404);
  });

  it('is 403 for a Member, on the page and the form', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.member);
    expect((await session.get(`/orgs/${s.ein}/connections`)).status).toBe(403);
    const csrf = csrfOf((await session.get('/account')).html);
    expect(
      (await session.browser.request(`${session.origin}/orgs/${s.ein}/connections/revoke`, { method: 'POST', form: { csrf, grant: 'x' } }))
        .status,
    ).toBe(403);
  });
});
