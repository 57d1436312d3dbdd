/**
 * Attack: a staff member who was removed from a nonprofit keeps the access and refresh tokens
 * they approved; once anyone adds them back (same or another role), those old tokens work
 * again, and so does the old authorization for new sign-ins, without a new consent.
 * Protection: removing a membership revokes that user's user-subject authorizations for that
 * nonprofit in every environment, at once and in the same transaction: the Grant, every token
 * and code it issued, the sessions' references, our row marked revoked, one audit row each.
 * Re-adding starts from nothing. Organization-subject authorizations are unaffected (they
 * belong to the nonprofit), and a role change still only narrows.
 */
import { describe, expect, it } from 'vitest';
import { introspect, obtainTokens, tokenRequest, type Env } from '../helpers/flow.js';
import { apiGet } from '../helpers/gateway.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

type Client = { client_id: string; client_secret: string };
const REDIRECT = 'https://app.example.org/callback';
const SANDBOX_REDIRECT = 'http://127.0.0.1:9999/callback';
const {
  testDatabase: t,
  server,
  clients: { production, sandbox, orgClient },
} = useOAuthServer({
  staff: 0,
  clients: {
    production: { environment: 'production', redirectUris: [REDIRECT] },
    sandbox: { environment: 'sandbox', redirectUris: [SANDBOX_REDIRECT] },
    orgClient: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write'], subjectType: 'organization' },
  },
});

/** The real admin CLI, in process, against the test database. */
async function admin(...argv: string[]) {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], { DATABASE_URL: t.url });
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function approve(staff: Staff, who: 'admin' | 'member', environment: Env, client: Client, scope: string) {
  const result = await obtainTokens(server, {
    environment,
    client,
    clientId: client.client_id,
    redirectUri: environment === 'sandbox' ? SANDBOX_REDIRECT : REDIRECT,
    scope,
    login: staff.users[who],
  });
  expect(result.tokens.status).toBe(200);
  return { ...result, access: result.tokens.body.access_token as string, refresh: result.tokens.body.refresh_token as string };
}

const gateway = (environment: Env, bearer: string) => apiGet(server, environment, '/v1/donations', { bearer });
const refresh = (environment: Env, client: Client, token: string) =>
  tokenRequest(server, environment, client, { grant_type: 'refresh_token', refresh_token: token });

describe('a removed approver who is added back', () => {
  it('does not get the old authorizations back: old tokens are refused everywhere, a new consent is asked and works', async () => {
    const staff = await createStaff(t.db);
    const prod = await approve(staff, 'admin', 'production', production, 'openid read_only read_write');
    const sand = await approve(staff, 'admin', 'sandbox', sandbox, 'read_only');
    const org = await approve(staff, 'admin', 'production', orgClient, 'read_only');
    expect((await gateway('production', prod.access)).status).toBe(200);
    expect((await gateway('sandbox', sand.access)).status).toBe(200);

    expect(await admin('members', 'remove', '--org', staff.ein, '--email', staff.users.admin.email)).toMatchObject({
      revoked_authorizations: 2,
    });
    await admin('members', 'add', '--org', staff.ein, '--email', staff.users.admin.email, '--role', 'admin');

    for (const [environment, old, client] of [
      ['production', prod, production],
      ['sandbox', sand, sandbox],
    ] as const) {
      const call = await gateway(environment, old.access);
      expect(call.status).toBe(401);
      expect(call.body).toMatchObject({ status: 401, detail: expect.stringMatching(/invalid, expired or revoked/) });
      expect((await introspect(server, environment, client, old.access)).body).toEqual({ active: false });
      const renewed = await refresh(environment, client, old.refresh);
      expect(renewed.status).toBe(401);
      expect(renewed.body.error).toBe('invalid_grant');
    }

    // The nonprofit's own authorization (organization subject) is not the approver's to lose.
    const orgRenewed = await refresh('production', orgClient, org.refresh);
    expect(orgRenewed.status).toBe(200);
    expect((await gateway('production', orgRenewed.body.access_token as string)).status).toBe(200);

    // Recorded, with why.
    const audits = await t.db
      .selectFrom('audit_events')
      .select(['event', 'environment', 'client_id', 'organization_id', 'details'])
      .where('event', '=', 'authorization.revoked')
      .where('organization_id', '=', staff.orgId)
      .execute();
    expect(audits).toHaveLength(2);
    expect(audits).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          environment: 'production',
          client_id: production.client_id,
          details: expect.objectContaining({ reason: 'membership_removed', subject_type: 'user' }),
        }),
        expect.objectContaining({
          environment: 'sandbox',
          client_id: sandbox.client_id,
          details: expect.objectContaining({ reason: 'membership_removed', subject_type: 'user' }),
        }),
      ]),
    );

    // Starting from nothing: the consent screen is shown again, and what it issues works.
    const fresh = await approve(staff, 'admin', 'production', production, 'openid read_only read_write');
    expect(fresh.consentHtml).toMatch(/>Approve</);
    expect(String(fresh.tokens.body.scope).split(' ').sort()).toEqual(['openid', 'read_only', 'read_write']);
    expect((await gateway('production', fresh.access)).status).toBe(200);
    expect((await refresh('production', production, fresh.refresh)).status).toBe(200);
  });

  it("a role change still only narrows: the authorization lives on with the new role's scopes", async () => {
    const staff = await createStaff(t.db);
    const before = await approve(staff, 'member', 'production', production, 'read_only read_write');
    expect(before.tokens.body.scope).toBe('read_only read_write');
    await admin('members', 'set-role', '--org', staff.ein, '--email', staff.users.member.email, '--role', 'read_only');
    expect((await gateway('production', before.access)).status).toBe(200);
    expect((await introspect(server, 'production', production, before.access)).body).toMatchObject({ active: true, scope: 'read_only' });
    const narrowed = await refresh('production', production, before.refresh);
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('read_only');
    const revoked = await t.db
      .selectFrom('oauth_authorizations')
      .select('revoked_at')
      .where('user_id', '=', staff.users.member.id)
      .executeTakeFirstOrThrow();
    expect(revoked.revoked_at).toBeNull();
  });
});
