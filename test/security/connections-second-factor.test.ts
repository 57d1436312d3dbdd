import { describe, expect, it } from 'vitest';
import { confirmSecondFactor, dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * An organization's "second factor required" bypassed through the user's own connections page
 * (docs/security.md, "An organization's second-factor rule on every page that acts for it"): an
 * Admin whose session was signed in with the password only revokes the organization's
 * applications at /oauth/connections instead of the organization's pages, which refuse it.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const REDIRECT = 'https://app.example.org/callback';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

describe("an organization's second-factor rule on /oauth/connections", () => {
  it('a password-only session of an Admin neither sees nor revokes the access of an organization that requires a second factor; confirming opens it', async () => {
    const s = await createStaff(t.db);
    const admin = s.users.admin;
    const client = await server.registerClient({
      environment: 'production',
      name: 'Ledger Sync',
      redirectUris: [REDIRECT],
      scopes: ['read_only'],
      subjectType: 'organization',
    });
    const granted = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: s.users.owner,
    });
    const grant = (
      await t.db.selectFrom('oauth_authorizations').select('grant_id').where('client_id', '=', client.client_id).executeTakeFirstOrThrow()
    ).grant_id;

    // The Admin has a second factor, but this session signed in before it was set up.
    const passwordOnly = await dashboardSession(server, 'production', admin);
    await enrolAuthenticator(await dashboardSession(server, 'production', admin), admin.email);
    await t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', s.orgId).execute();

    expect((await passwordOnly.get(`/orgs/${s.ein}/connections`)).status).toBe(403);
    const page = await passwordOnly.get('/oauth/connections');
    expect(page.status).toBe(200);
    expect(page.html).not.toContain(`value="${grant}"`);
    expect(page.html).toContain('requires a second factor');
    const revoke = await passwordOnly.browser.request(`${passwordOnly.origin}/oauth/connections/revoke`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), grant },
    });
    expect(revoke.status).toBe(404);
    expect(
      (await t.db.selectFrom('oauth_authorizations').select('revoked_at').where('grant_id', '=', grant).executeTakeFirstOrThrow())
        .revoked_at,
    ).toBeNull();
    expect(
      (
        await tokenRequest(server, 'production', client, {
          grant_type: 'refresh_token',
          refresh_token: granted.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);

    // The same session, once it confirms with the second factor, acts for the organization.
    await confirmSecondFactor(passwordOnly, admin.email);
    const opened = await passwordOnly.get('/oauth/connections');
    expect(opened.html).toContain(`value="${grant}"`);
    const revoked = await passwordOnly.browser.request(`${passwordOnly.origin}/oauth/connections/revoke`, {
      method: 'POST',
      form: { csrf: csrfOf(opened.html), grant },
    });
    expect(revoked.status).toBe(200);
    expect(
      (await t.db.selectFrom('oauth_authorizations').select('revoked_at').where('grant_id', '=', grant).executeTakeFirstOrThrow())
        .revoked_at,
    ).not.toBeNull();
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'authorization.revoked')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: admin.id, details: { via: 'connections_page' } });
  });
});
