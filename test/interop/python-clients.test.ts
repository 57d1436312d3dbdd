import { describe, expect, it } from 'vitest';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { approveInHostedPages } from './helpers/hosted-pages.js';
import { runPythonClient, type PythonClientConfig } from './helpers/python.js';

/**
 * Python relying parties as vendors write them: Authlib (python3-authlib) and requests-oauthlib
 * (python3-requests-oauthlib), run by test/interop/python_client.py with Debian's python3. The
 * script does the protocol; the test plays the user in the hosted pages. docs/integrations.md
 * shows the same calls.
 */

const REDIRECT = 'http://127.0.0.1:9999/callback';
const { server, staff } = useOAuthServer();

const scopes = (value: unknown) => String(value).split(' ').sort();

async function run(library: PythonClientConfig['library'], scope: string) {
  const client = await server.registerClient({ environment: 'sandbox', name: `${library} app`, redirectUris: [REDIRECT] });
  const steps = await runPythonClient({ library, issuer: server.urls.sandboxApi, ...client, redirect_uri: REDIRECT, scope }, (url) =>
    approveInHostedPages(url, staff.users.owner),
  );
  return { client, steps };
}

describe('Authlib (OAuth2Session, client_secret_basic, PKCE S256, nonce)', () => {
  it('exchanges the code, validates the id_token with Authlib JWT, reads userinfo, refreshes naming the scope, introspects and revokes', async () => {
    const { client, steps } = await run('authlib', 'openid read_only');
    expect(steps.code_exchange).toMatchObject({ token_type: 'Bearer', expires_in: 900, has_refresh_token: true, has_id_token: true });
    expect(scopes(steps.code_exchange!.scope)).toEqual(['openid', 'read_only']);
    expect(steps.id_token).toEqual({
      valid: true,
      sub: staff.users.owner.id,
      aud: client.client_id,
      nonce_matches: true,
      alg: expect.stringMatching(/^(RS|ES)256$/),
    });
    expect(steps.userinfo).toEqual({
      status: 200,
      body: expect.objectContaining({ sub: staff.users.owner.id, email: staff.users.owner.email }),
    });
    expect(steps.refresh).toMatchObject({ token_type: 'Bearer', expires_in: 900, rotated: true });
    expect(scopes(steps.refresh!.scope)).toEqual(['openid', 'read_only']);
    expect(steps.introspection).toEqual({
      status: 200,
      body: expect.objectContaining({ active: true, client_id: client.client_id, sub: staff.users.owner.id }),
    });
    expect(scopes((steps.introspection!.body as Record<string, unknown>).scope)).toEqual(['openid', 'read_only']);
    expect(steps.revocation).toEqual({ status: 200, introspection_after: { active: false } });
  });

  // Needs offline_access to be accepted (docs/oauth.md, scopes).
  it('with offline_access requested: the token response echoes it, and the refresh that names it succeeds', async () => {
    const { steps } = await run('authlib', 'openid read_only offline_access');
    expect(scopes(steps.code_exchange!.scope)).toEqual(['offline_access', 'openid', 'read_only']);
    expect(steps.refresh).toMatchObject({ rotated: true });
    expect(scopes(steps.refresh!.scope)).toEqual(['offline_access', 'openid', 'read_only']);
    expect(steps.revocation).toMatchObject({ status: 200 });
  });
});

describe('requests-oauthlib (OAuth2Session, PKCE and nonce as extra parameters)', () => {
  it('exchanges the code with HTTP Basic, is refused the secret in the body, refreshes naming the scope with Basic, reads userinfo', async () => {
    const { steps } = await run('requests-oauthlib', 'openid read_only');
    expect(steps.code_exchange).toMatchObject({ token_type: 'Bearer', expires_in: 900, has_refresh_token: true, has_id_token: true });
    // The known quirk: client_id and client_secret as keywords go in the body, and only Basic is accepted.
    expect(steps.secret_in_body).toEqual({ refused: true, error: 'invalid_client', status: 401 });
    expect(steps.refresh).toMatchObject({ rotated: true, expires_in: 900 });
    expect(scopes(steps.refresh!.scope)).toEqual(['openid', 'read_only']);
    expect(steps.userinfo).toEqual({ status: 200, body: expect.objectContaining({ sub: staff.users.owner.id }) });
  });

  // Needs offline_access to be accepted (docs/oauth.md, scopes): without it oauthlib stops at the code exchange
  // with "Scope has changed", since the response drops offline_access.
  it('with offline_access requested: the code exchange keeps the scope, and the refresh that names it succeeds', async () => {
    const { steps } = await run('requests-oauthlib', 'openid read_only offline_access');
    expect(scopes(steps.code_exchange!.scope)).toEqual(['offline_access', 'openid', 'read_only']);
    expect(steps.refresh).toMatchObject({ rotated: true });
    expect(scopes(steps.refresh!.scope)).toEqual(['offline_access', 'openid', 'read_only']);
  });
});
