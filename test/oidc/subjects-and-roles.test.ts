import { describe, expect, it } from 'vitest';
import { addMember, removeMember, setMemberRole } from '../../src/accounts/memberships.js';
import { authorize, basic, endpoints, introspect, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { userClient, orgClient },
} = useOAuthServer({
  clients: {
    userClient: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid', 'offline_access'] },
    orgClient: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write'], subjectType: 'organization' },
  },
});

const refresh = (client: { client_id: string; client_secret: string }, token: unknown) =>
  tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: token as string });

describe('scope intersection', () => {
  it('gives a read-only user asking for read_only read_write only read_only, and says so on the consent screen', async () => {
    const { tokens, consentHtml } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
      login: staff.users.read_only,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('read_only');
    expect(consentHtml).toContain('Not granted');
    expect(consentHtml).toContain('Only the access listed above will be granted');
    expect(consentHtml).toMatch(/>Approve</);
  });

  it('offers a read-only user asked for read_write alone only Deny, which returns access_denied with state', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_write',
      login: staff.users.read_only,
    });
    expect(result.consentHtml).not.toMatch(/>Approve</);
    expect(result.consentHtml).toMatch(/does not allow you to grant read_write/);
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    expect(result.callback.searchParams.get('state')).toBe(result.state);
  });
});

describe('user subject', () => {
  it("answers 412 when the approver's new role permits none of the scopes, and narrows when it permits some", async () => {
    const narrow = await createStaff(t.db);
    const writeOnly = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_write',
      login: narrow.users.member,
    });
    const both = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
      login: narrow.users.member,
    });
    await setMemberRole(t.db, { org: narrow.ein, email: narrow.users.member.email, role: 'read_only' });
    const refused = await refresh(userClient, writeOnly.tokens.body.refresh_token);
    expect(refused.status).toBe(412);
    expect(refused.body).toEqual({ error: 'insufficient_permissions', error_description: expect.stringMatching(/role/) });
    const narrowed = await refresh(userClient, both.tokens.body.refresh_token);
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('read_only');
    const seen = await introspect(server, 'production', userClient, narrowed.body.access_token as string);
    expect(seen.body).toMatchObject({ active: true, scope: 'read_only', client_id: userClient.client_id });
  });

  it('answers 412 at the code exchange when the role changed between consent and exchange', async () => {
    const s = await createStaff(t.db);
    const result = await authorize(server, {
      environment: 'production',
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_write',
      login: s.users.member,
    });
    await setMemberRole(t.db, { org: s.ein, email: s.users.member.email, role: 'read_only' });
    const exchange = await tokenRequest(server, 'production', userClient, {
      grant_type: 'authorization_code',
      code: result.callback.searchParams.get('code')!,
      code_verifier: result.verifier,
    });
    expect(exchange.status).toBe(412);
  });

  it('stops at once when the approver leaves the nonprofit: refresh 401, introspection inactive', async () => {
    const s = await createStaff(t.db);
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: s.users.member,
    });
    await removeMember(t.db, { org: s.ein, email: s.users.member.email });
    expect((await introspect(server, 'production', userClient, tokens.body.access_token as string)).body).toEqual({ active: false });
    const after = await refresh(userClient, tokens.body.refresh_token);
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_grant');
  });

  it('serves UserInfo to an openid token, with the approving user', async () => {
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.admin,
    });
    const response = await fetch(`${endpoints(server, 'production').api}/auth/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.body.access_token as string}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ sub: staff.users.admin.id, email: staff.users.admin.email });
    const noOpenid = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.admin,
    });
    expect(noOpenid.tokens.body.id_token).toBeUndefined();
    const refused = await fetch(`${endpoints(server, 'production').api}/auth/oauth/userinfo`, {
      headers: { authorization: `Bearer ${noOpenid.tokens.body.access_token as string}` },
    });
    expect(refused.status).toBe(403);
  });
});

describe('organization subject', () => {
  it('issues no id_token, survives the approver leaving, and only Owners and Admins may approve it', async () => {
    const s = await createStaff(t.db);
    const { tokens, consentHtml } = await obtainTokens(server, {
      environment: 'production',
      client: orgClient,
      clientId: orgClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
      login: s.users.admin,
    });
    expect(consentHtml).toMatch(/belongs to .*, not to you/);
    expect(tokens.status).toBe(200);
    expect(tokens.body.id_token).toBeUndefined();
    expect(tokens.body.scope).toBe('read_only read_write');
    await removeMember(t.db, { org: s.ein, email: s.users.admin.email });
    const after = await refresh(orgClient, tokens.body.refresh_token);
    expect(after.status).toBe(200);
    expect(after.body.scope).toBe('read_only read_write');
    expect((await introspect(server, 'production', orgClient, after.body.access_token as string)).body).toMatchObject({
      active: true,
      subject_type: 'organization',
    });

    const member = await authorize(server, {
      environment: 'production',
      clientId: orgClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: s.users.member,
    });
    expect(member.consentHtml).not.toMatch(/>Approve</);
    expect(member.consentHtml).toMatch(/Only an Owner or Admin/);
    expect(member.callback.searchParams.get('error')).toBe('access_denied');
  });
});

describe('nonprofit choice', () => {
  it('asks a user who belongs to several nonprofits which one, and binds the authorization to it', async () => {
    const a = await createStaff(t.db);
    const b = await createStaff(t.db);
    await addMember(t.db, { org: b.ein, email: a.users.owner.email, role: 'read_only' });
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
      login: a.users.owner,
      organizationId: b.orgId,
    });
    expect(tokens.body.scope).toBe('read_only');
    const row = await t.db
      .selectFrom('oauth_authorizations')
      .select(['organization_id', 'user_id', 'subject_type'])
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ organization_id: b.orgId, user_id: a.users.owner.id, subject_type: 'user' });
  });
});

describe('revocation and introspection', () => {
  it('revokes the whole authorization when its refresh token is revoked (RFC 7009)', async () => {
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    const response = await fetch(`${endpoints(server, 'production').api}/auth/oauth/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(userClient.client_id, userClient.client_secret),
      },
      body: new URLSearchParams({ token: tokens.body.refresh_token as string, token_type_hint: 'refresh_token' }),
    });
    expect(response.status).toBe(200);
    expect((await introspect(server, 'production', userClient, tokens.body.access_token as string)).body).toEqual({ active: false });
    expect((await refresh(userClient, tokens.body.refresh_token)).status).toBe(401);
  });

  it('lets a client see and revoke only its own tokens', async () => {
    const other = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client: userClient,
      clientId: userClient.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    expect((await introspect(server, 'production', other, tokens.body.access_token as string)).body).toEqual({ active: false });
    const revoke = await fetch(`${endpoints(server, 'production').api}/auth/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(other.client_id, other.client_secret) },
      body: new URLSearchParams({ token: tokens.body.access_token as string }),
    });
    expect(revoke.status).toBe(200);
    expect((await introspect(server, 'production', userClient, tokens.body.access_token as string)).body.active).toBe(true);
  });
});
