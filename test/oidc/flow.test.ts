import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { authorize, exchangeCode, type Env } from '../helpers/flow.js';
import { createStaff, startOAuthServer, type OAuthTestServer, type Staff } from '../helpers/oauth-server.js';

let t: TestDatabase;
let server: OAuthTestServer;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  server = await startOAuthServer(t.db);
  staff = await createStaff(t.db);
});
afterAll(async () => {
  await server?.close();
  await t?.drop();
});

describe.each(['production', 'sandbox'] as Env[])('authorization code flow with PKCE (%s)', (environment) => {
  it('logs in, consents, exchanges the code and verifies the id_token with a real OAuth client library', async () => {
    const redirectUri = environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback';
    const client = await server.registerClient({ environment, redirectUris: [redirectUri] });
    const result = await authorize(server, { environment, clientId: client.client_id, redirectUri, scope: 'openid read_only read_write', login: staff.users.member });
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
