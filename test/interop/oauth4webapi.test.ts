import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { approveInHostedPages } from './helpers/hosted-pages.js';

/**
 * oauth4webapi as an OAuth 2.0 client (no openid scope, no id_token): authorization code with
 * PKCE, refresh naming the scope, a /v1 call and revocation, with oauth4webapi's own checks
 * (RFC 9207 `iss` on the response, state, token response shape). docs/integrations.md shows
 * the same calls. Plain http is allowed only because the server is on loopback.
 */

const REDIRECT = 'http://127.0.0.1:9999/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const { server, staff } = useOAuthServer();

async function setUp() {
  const registered = await server.registerClient({ environment: 'sandbox', name: 'oauth4webapi app', redirectUris: [REDIRECT] });
  const issuer = new URL(server.urls.sandboxApi);
  // OAuth 2.0 mode: RFC 8414 discovery reads /.well-known/oauth-authorization-server.
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  expect(as.userinfo_endpoint).toBeUndefined();
  const client: oauth.Client = { client_id: registered.client_id };
  const clientAuth = oauth.ClientSecretBasic(registered.client_secret);
  return { as, client, clientAuth };
}

/** The authorization URL as an OAuth 2.0 client builds it, plus the nonce Almoner requires of every client. */
async function authorizationUrl(as: oauth.AuthorizationServer, client: oauth.Client, scope: string, withNonce = true) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', REDIRECT);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (withNonce) url.searchParams.set('nonce', oauth.generateRandomNonce());
  return { url, verifier, state };
}

async function codeFlow(scope: string) {
  const { as, client, clientAuth } = await setUp();
  const { url, verifier, state } = await authorizationUrl(as, client, scope);
  const callback = await approveInHostedPages(url.toString(), staff.users.owner);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { as, client, clientAuth, callback, tokens };
}

const scopes = (value: string | undefined) => (value ?? '').split(' ').sort();

describe('oauth4webapi in OAuth 2.0 mode', () => {
  it('code + PKCE (iss checked on the response), a /v1 call, refresh naming the scope, revocation', async () => {
    const { as, client, clientAuth, callback, tokens } = await codeFlow('read_only read_write');
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 900, refresh_token: expect.any(String) });
    expect(tokens.id_token).toBeUndefined();
    expect(scopes(tokens.scope)).toEqual(['read_only', 'read_write']);

    const donations = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${server.urls.sandboxApi}/v1/donations`),
      undefined,
      undefined,
      insecure,
    );
    expect(donations.status).toBe(200);
    expect(await donations.json()).toMatchObject({ results: expect.any(Array) });

    const refreshResponse = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, {
      additionalParameters: { scope: 'read_only read_write' },
      ...insecure,
    });
    const refreshed = await oauth.processRefreshTokenResponse(as, client, refreshResponse);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(scopes(refreshed.scope)).toEqual(['read_only', 'read_write']);
    const again = await oauth.protectedResourceRequest(
      refreshed.access_token,
      'GET',
      new URL(`${server.urls.sandboxApi}/v1/donations`),
      undefined,
      undefined,
      insecure,
    );
    expect(again.status).toBe(200);

    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token!, {
        additionalParameters: { scope: 'read_only' },
        ...insecure,
      }),
    );
    expect(narrowed.scope).toBe('read_only');

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, narrowed.refresh_token!, {
        additionalParameters: { token_type_hint: 'refresh_token' },
        ...insecure,
      }),
    );
    const afterRevocation = await oauth.introspectionRequest(as, client, clientAuth, narrowed.access_token, insecure);
    await expect(oauth.processIntrospectionResponse(as, client, afterRevocation)).resolves.toMatchObject({ active: false });
  });

  it('is refused without nonce, which Almoner requires of OAuth 2.0 clients too', async () => {
    const { as, client } = await setUp();
    const { url, state } = await authorizationUrl(as, client, 'read_only', false);
    const callback = await approveInHostedPages(url.toString(), staff.users.owner);
    expect(Object.fromEntries(callback.searchParams)).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('nonce'),
      state,
    });
    expect(() => oauth.validateAuthResponse(as, client, callback, state)).toThrow(oauth.AuthorizationResponseError);
  });

  // Needs offline_access to be accepted (docs/oauth.md, scopes).
  it('with offline_access requested: the token response echoes it, and the refresh that names it succeeds', async () => {
    const { as, client, clientAuth, tokens } = await codeFlow('read_only offline_access');
    expect(scopes(tokens.scope)).toEqual(['offline_access', 'read_only']);
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, {
        additionalParameters: { scope: 'read_only offline_access' },
        ...insecure,
      }),
    );
    expect(scopes(refreshed.scope)).toEqual(['offline_access', 'read_only']);
  });
});
