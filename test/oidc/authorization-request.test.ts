import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { authorize, endpoints } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: {
    client: {
      environment: 'production',
      redirectUris: [REDIRECT],
      scopes: ['read_only', 'read_write', 'openid', 'read:bank_accounts', 'sync:connected_accounts'],
    },
  },
});

async function authorizationRequest(overrides: Record<string, string | undefined>) {
  const verifier = oauth.generateRandomCodeVerifier();
  const params: Record<string, string | undefined> = {
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid read_only',
    state: 'st-123',
    nonce: 'n-456',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...overrides,
  };
  const url = new URL(endpoints(server, 'production').authorize);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
  const location = response.headers.get('location');
  return { status: response.status, location: location ? new URL(location, url) : undefined, html: await response.text() };
}

function expectRedirectedError(result: { location?: URL }, error: string) {
  expect(result.location?.origin + result.location!.pathname).toBe(REDIRECT);
  expect(result.location!.searchParams.get('error')).toBe(error);
  expect(result.location!.searchParams.get('state')).toBe('st-123');
  expect(result.location!.searchParams.get('error_description')).toBeTruthy();
}

function expectStartedInteraction(result: { status: number; location?: URL }) {
  expect(result.status).toBe(303);
  expect(result.location?.pathname).toMatch(/^\/oauth\/interaction\/[A-Za-z0-9_-]+$/);
}

function expectErrorPage(result: { status: number; location?: URL; html: string }, text: RegExp) {
  expect(result.location).toBeUndefined();
  expect(result.status).toBeGreaterThanOrEqual(400);
  expect(result.html).toMatch(/<html/);
  expect(result.html).toMatch(text);
}

describe('authorization requests', () => {
  it('start the hosted login for a valid request', async () => {
    expectStartedInteraction(await authorizationRequest({}));
  });

  it('accept S256 only: plain and a missing challenge are invalid_request, returned with state', async () => {
    expectRedirectedError(
      await authorizationRequest({ code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) }),
      'invalid_request',
    );
    expectRedirectedError(await authorizationRequest({ code_challenge: undefined, code_challenge_method: undefined }), 'invalid_request');
  });

  it('require a nonce, with or without openid', async () => {
    const withOpenid = await authorizationRequest({ nonce: undefined });
    expectRedirectedError(withOpenid, 'invalid_request');
    expect(withOpenid.location!.searchParams.get('error_description')).toMatch(/nonce/);
    expectRedirectedError(await authorizationRequest({ nonce: undefined, scope: 'read_only' }), 'invalid_request');
    expectStartedInteraction(await authorizationRequest({ scope: 'read_only' }));
  });

  it('accept only response_type=code', async () => {
    expectRedirectedError(await authorizationRequest({ response_type: 'token' }), 'unsupported_response_type');
    expectRedirectedError(await authorizationRequest({ response_type: 'code id_token' }), 'unsupported_response_type');
    expectErrorPage(await authorizationRequest({ response_type: 'token', redirect_uri: 'https://evil.example/cb' }), /return address/);
  });

  it.each(['form_post', 'fragment', 'query.jwt', 'form_post.jwt'])(
    'refuse response_mode=%s with invalid_request, in the query and with state',
    async (mode) => {
      const result = await authorizationRequest({ response_mode: mode });
      expectRedirectedError(result, 'invalid_request');
      expect(result.location!.hash).toBe('');
      expect(result.location!.searchParams.get('error_description')).toMatch(/response_mode/);
      expect(result.location!.searchParams.get('code')).toBeNull();
      expect(result.location!.searchParams.get('iss')).toBe(server.urls.api);
    },
  );

  it('refuse response_mode given twice, and accept response_mode=query', async () => {
    const url = new URL(endpoints(server, 'production').authorize);
    const verifier = oauth.generateRandomCodeVerifier();
    const base = {
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read_only',
      state: 'st-123',
      nonce: 'n-456',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(base)) url.searchParams.set(k, v);
    url.searchParams.append('response_mode', 'query');
    url.searchParams.append('response_mode', 'form_post');
    const twice = await fetch(url, { redirect: 'manual' });
    expectRedirectedError({ location: new URL(twice.headers.get('location')!, url) }, 'invalid_request');
    expectStartedInteraction(await authorizationRequest({ response_mode: 'query' }));
  });

  it('render the error page, never a redirect, for response_mode=form_post with an unregistered redirect_uri', async () => {
    expectErrorPage(
      await authorizationRequest({ response_mode: 'form_post', redirect_uri: 'https://evil.example/callback' }),
      /return address/,
    );
  });

  it('advertise response_modes_supported ["query"] only', async () => {
    const doc = (await (await fetch(`${server.urls.api}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.response_modes_supported).toEqual(['query']);
  });

  it('refuse scopes outside the registered set, unknown scopes and both FDX scopes together (invalid_scope)', async () => {
    expectRedirectedError(await authorizationRequest({ scope: 'read_only offline_access' }), 'invalid_scope');
    expectRedirectedError(await authorizationRequest({ scope: 'read_only admin' }), 'invalid_scope');
    expectRedirectedError(await authorizationRequest({ scope: 'read_only read:bank_accounts sync:connected_accounts' }), 'invalid_scope');
    expectStartedInteraction(await authorizationRequest({ scope: 'read_only read:bank_accounts' }));
  });

  it('render an error page, never a redirect, for an unknown client', async () => {
    expectErrorPage(await authorizationRequest({ client_id: 'live_doesnotexist123' }), /not registered/);
  });

  it.each([
    ['path case', 'https://app.example.org/CALLBACK'],
    ['query', 'https://app.example.org/callback?x=1'],
    ['fragment', 'https://app.example.org/callback#frag'],
    ['extra port', 'https://app.example.org:8443/callback'],
    ['other path', 'https://app.example.org/callback/other'],
    ['other host', 'https://evil.example/callback'],
    ['http scheme', 'http://app.example.org/callback'],
  ])('render an error page, never a redirect, for a redirect_uri that differs by %s', async (_name, redirectUri) => {
    expectErrorPage(await authorizationRequest({ redirect_uri: redirectUri }), /return address/);
  });

  it('render an error page when redirect_uri is missing', async () => {
    expectErrorPage(await authorizationRequest({ redirect_uri: undefined }), /<h1>/);
  });

  it.each([
    ['an upper-case scheme and host', 'HTTPS://APP.EXAMPLE.ORG/callback'],
    ['an explicit :443', 'https://app.example.org:443/callback'],
  ])('match a redirect_uri with %s', async (_name, redirectUri) => {
    expectStartedInteraction(await authorizationRequest({ redirect_uri: redirectUri }));
  });

  it('echo state on success, and accept a nonce without openid through the whole flow', async () => {
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    expect(result.callback.searchParams.get('state')).toBe(result.state);
    expect(result.callback.searchParams.get('code')).toBeTruthy();
    expect(result.callback.searchParams.get('iss')).toBe(server.urls.api);
  });

  it('is served on the dashboard host only, and the token endpoint on the API host only', async () => {
    const onApi = await fetch(`${server.urls.api}/oauth/authorize?client_id=${client.client_id}`, { redirect: 'manual' });
    expect(onApi.status).toBe(404);
    const onDashboard = await fetch(`${server.urls.dashboard}/auth/oauth/token`, {
      method: 'POST',
      body: 'grant_type=refresh_token&refresh_token=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(onDashboard.status).toBe(404);
    const sandboxPathOnProduction = await fetch(`${server.urls.dashboard}/oauth/sandbox/authorize?client_id=${client.client_id}`, {
      redirect: 'manual',
    });
    expect(sandboxPathOnProduction.status).toBe(404);
  });
});
