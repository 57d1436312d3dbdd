import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { authorize, endpoints, exchangeCode, type Env } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();

describe.each(['production', 'sandbox'] as Env[])('authorization code flow with PKCE (%s)', (environment) => {
  it('logs in, consents, exchanges the code and verifies the id_token with a real OAuth client library', async () => {
    const redirectUri = environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback';
    const client = await server.registerClient({ environment, redirectUris: [redirectUri] });
    const result = await authorize(server, {
      environment,
      clientId: client.client_id,
      redirectUri,
      scope: 'openid read_only read_write',
      login: staff.users.member,
    });
    expect(result.callback.searchParams.get('state')).toBe(result.state);
    expect(result.callback.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { as, client: c, response } = await exchangeCode(server, environment, client, result, redirectUri);
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: result.nonce, requireIdToken: true });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope?.split(' ').sort()).toEqual(['openid', 'read_only', 'read_write']);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims.sub).toBe(staff.users.member.id);
    expect(claims.iss).toBe(as.issuer);
  });
});

describe('discovery', () => {
  it.each(['production', 'sandbox'] as Env[])(
    'advertises exactly what is supported (%s), with the authorization and end-session endpoints on the dashboard host',
    async (environment) => {
      const { api, authorize: authorizeUrl, endSession } = endpoints(server, environment);
      const response = await fetch(`${api}/.well-known/openid-configuration`);
      expect(response.status).toBe(200);
      const doc = (await response.json()) as Record<string, unknown>;
      expect(doc).toMatchObject({
        issuer: api,
        authorization_endpoint: authorizeUrl,
        end_session_endpoint: endSession,
        token_endpoint: `${api}/auth/oauth/token`,
        jwks_uri: `${api}/.well-known/jwks.json`,
        userinfo_endpoint: `${api}/auth/oauth/userinfo`,
        revocation_endpoint: `${api}/auth/oauth/revoke`,
        introspection_endpoint: `${api}/auth/oauth/introspect`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        // For fapi2 clients (docs/bank-data.md): pushed requests, DPoP.
        pushed_authorization_request_endpoint: `${api}/auth/oauth/par`,
        dpop_signing_alg_values_supported: ['PS256', 'ES256', 'EdDSA'],
      });
      expect([...(doc.scopes_supported as string[])].sort()).toEqual([
        'offline_access',
        'openid',
        'read:bank_accounts',
        'read_only',
        'read_write',
        'sync:connected_accounts',
      ]);
      expect(doc).not.toHaveProperty('registration_endpoint');
      expect(doc).not.toHaveProperty('require_pushed_authorization_requests');
      expect(String(doc.token_endpoint)).not.toContain('dashboard');
    },
  );
});

describe('audit trail', () => {
  it('records the login, the consent and the token issuance of a flow, and a failed login', async () => {
    const client = await server.registerClient({ environment: 'production', redirectUris: ['https://app.example.org/callback'] });
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only',
      login: staff.users.owner,
    });
    await exchangeCode(server, 'production', client, result, 'https://app.example.org/callback');
    const failed = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only',
      login: { email: staff.users.owner.email, password: 'wrong password' },
    }).catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    await expect
      .poll(async () =>
        (await t.db.selectFrom('audit_events').select('event').where('client_id', '=', client.client_id).execute())
          .map((e) => e.event)
          .sort(),
      )
      .toEqual(expect.arrayContaining(['consent.granted', 'login.failed', 'login.succeeded', 'token.issued']));
    const consent = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'consent.granted')
      .where('client_id', '=', client.client_id)
      .executeTakeFirstOrThrow();
    expect(consent).toMatchObject({ environment: 'production', actor_user_id: staff.users.owner.id, organization_id: staff.orgId });
    expect(JSON.stringify(await t.db.selectFrom('audit_events').selectAll().execute())).not.toContain('wrong password');
  });
});
