import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { approveInHostedPages } from './helpers/hosted-pages.js';

/**
 * The token endpoint, a /v1 call, introspection and revocation with curl, the command lines
 * docs/integrations.md shows (the browser step is the hosted pages, driven by the test).
 */

const REDIRECT = 'http://127.0.0.1:9999/callback';
const { server, staff } = useOAuthServer();

/** Runs curl as the guide writes it; returns the HTTP status and the JSON body. */
async function curl(args: string[]): Promise<{ status: number; body: Record<string, unknown> }> {
  const { stdout } = await promisify(execFile)('curl', ['--silent', '--show-error', '--write-out', '\n%{http_code}', ...args]);
  const split = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(split + 1)), body: JSON.parse(stdout.slice(0, split)) as Record<string, unknown> };
}

describe('curl', () => {
  it('exchanges the code with -u (HTTP Basic), calls /v1, refreshes naming the scope, introspects and revokes', async () => {
    const { client_id, client_secret } = await server.registerClient({ environment: 'sandbox', name: 'curl', redirectUris: [REDIRECT] });
    const api = server.urls.sandboxApi;
    const verifier = oauth.generateRandomCodeVerifier();
    const authorize = new URL(`${server.urls.sandboxDashboard}/oauth/sandbox/authorize`);
    const params = {
      client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read_only',
      state: 'xyz',
      nonce: oauth.generateRandomNonce(),
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
    const callback = await approveInHostedPages(authorize.toString(), staff.users.owner);
    const code = callback.searchParams.get('code')!;

    const basic = ['-u', `${client_id}:${client_secret}`];
    const tokens = await curl([
      ...basic,
      '-d',
      'grant_type=authorization_code',
      '-d',
      `code=${code}`,
      '-d',
      `code_verifier=${verifier}`,
      '-d',
      `redirect_uri=${REDIRECT}`,
      `${api}/auth/oauth/token`,
    ]);
    expect(tokens).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 900, scope: 'read_only' } });

    const donations = await curl(['-H', `Authorization: Bearer ${String(tokens.body.access_token)}`, `${api}/v1/donations`]);
    expect(donations).toMatchObject({ status: 200, body: { results: expect.any(Array) } });

    const refreshed = await curl([
      ...basic,
      '-d',
      'grant_type=refresh_token',
      '-d',
      `refresh_token=${String(tokens.body.refresh_token)}`,
      '-d',
      'scope=read_only',
      `${api}/auth/oauth/token`,
    ]);
    expect(refreshed).toMatchObject({ status: 200, body: { scope: 'read_only', refresh_token: expect.any(String) } });
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);

    const introspection = await curl([...basic, '-d', `token=${String(refreshed.body.access_token)}`, `${api}/auth/oauth/introspect`]);
    expect(introspection).toMatchObject({ status: 200, body: { active: true, scope: 'read_only', client_id, sub: staff.users.owner.id } });

    const { stdout } = await promisify(execFile)('curl', [
      '--silent',
      '--write-out',
      '%{http_code}',
      ...basic,
      '-d',
      `token=${String(refreshed.body.refresh_token)}`,
      '-d',
      'token_type_hint=refresh_token',
      `${api}/auth/oauth/revoke`,
    ]);
    expect(stdout).toBe('200');
    const after = await curl([...basic, '-d', `token=${String(refreshed.body.access_token)}`, `${api}/auth/oauth/introspect`]);
    expect(after.body).toEqual({ active: false });

    // The client secret in the body instead of -u is refused: HTTP Basic only.
    const inBody = await curl([
      '-d',
      'grant_type=refresh_token',
      '-d',
      `refresh_token=${String(refreshed.body.refresh_token)}`,
      '-d',
      `client_id=${client_id}`,
      '-d',
      `client_secret=${client_secret}`,
      `${api}/auth/oauth/token`,
    ]);
    expect(inBody).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });
});
