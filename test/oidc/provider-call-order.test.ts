import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdapterRecorder, sequence, type AdapterCall } from '../helpers/adapter-recorder.js';
import { authorize, basic, endpoints, introspect, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The contract between oidc-provider and our unit of work (src/oidc/unit-of-work.ts,
 * unit-reads.ts, middleware/unit-of-work.ts): the order in which the library reads, consumes
 * and saves its models within one request. The unit's token plan assumes that
 *  - the first read of a code exchange or a refresh is the presented code or refresh token, so
 *    its one prefetch (unit-reads.ts, prefetchToken) brings the Grant the library reads next;
 *  - a request consumes once, and it is the presented token (the unit defers only the first
 *    consume, and the commit writes nothing unless it wins);
 *  - the new tokens are saved after that consume, and only models the plan defers (TOKENS);
 *  - introspection writes nothing;
 * and revocation (the client plan, which defers nothing) deletes the token, then the rest of the
 * authorization's tokens, then its Grant. Each request's adapter calls (model, method) are
 * recorded in order and pinned; an upgrade that reorders them fails here first, before the unit
 * silently reads or writes the wrong rows. Runs against the real provider and Postgres.
 */

const REDIRECT = 'https://app.example.org/callback';
const { server, staff, clients } = useOAuthServer({ clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });
const recorder = new AdapterRecorder();
beforeAll(() => recorder.start());
afterAll(() => recorder.stop());

const TOKEN_MODELS = new Set(['AccessToken', 'ClientCredentials', 'RefreshToken', 'AuthorizationCode']);
const writes = (calls: AdapterCall[]) => calls.filter((c) => c.method !== 'find' && c.method !== 'findByUid');

async function revoke(token: string): Promise<number> {
  const client = clients.client;
  const response = await fetch(`${endpoints(server, 'production').api}/auth/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
    body: new URLSearchParams({ token }),
  });
  return response.status;
}

describe("oidc-provider's per-request order of reads, consumes and saves (what the unit of work relies on)", () => {
  let refreshToken = '';
  let accessToken = '';

  it('an authorization-code exchange: the code is read first, then its Grant; one consume, of the code; then the new tokens are saved', async () => {
    const client = clients.client;
    const result = await authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    recorder.take();
    const code = result.callback.searchParams.get('code')!;
    const tokens = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code,
      code_verifier: result.verifier,
    });
    expect(tokens.status).toBe(200);
    const calls = recorder.take();
    expect(sequence(calls)).toEqual([
      // Ours first (middleware/token-request.ts, redirectUriFromCode), inside the unit: the prefetch.
      'AuthorizationCode.find',
      // The library's: answered from the unit.
      'AuthorizationCode.find',
      'Grant.find',
      'AuthorizationCode.consume',
      'AccessToken.upsert',
      'RefreshToken.upsert',
    ]);
    expect(writes(calls).every((c) => TOKEN_MODELS.has(c.model))).toBe(true);
    refreshToken = tokens.body.refresh_token as string;
  });

  it('a refresh: the refresh token is read first, then its Grant; one consume, of the token; then the rotated token and the access token are saved', async () => {
    const next = await tokenRequest(server, 'production', clients.client, { grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(next.status).toBe(200);
    expect(sequence(recorder.take())).toEqual([
      'RefreshToken.find',
      'Grant.find',
      'RefreshToken.consume',
      'RefreshToken.upsert',
      'AccessToken.upsert',
    ]);
    refreshToken = next.body.refresh_token as string;
    accessToken = next.body.access_token as string;
  });

  it('an introspection: the token is looked up as each kind of token at once, then its Grant; nothing is written', async () => {
    const answer = await introspect(server, 'production', clients.client, accessToken);
    expect(answer.body.active).toBe(true);
    const calls = recorder.take();
    expect(sequence(calls)).toEqual(['AccessToken.find', 'ClientCredentials.find', 'RefreshToken.find', 'Grant.find']);
    expect(writes(calls)).toEqual([]);
  });

  it("a revocation: the token is found and deleted, then the authorization's other tokens by grant, then its Grant", async () => {
    expect(await revoke(refreshToken)).toBe(200);
    expect(sequence(recorder.take())).toEqual([
      'AccessToken.find',
      'ClientCredentials.find',
      'RefreshToken.find',
      'RefreshToken.destroy',
      'AccessToken.revokeByGrantId',
      'RefreshToken.revokeByGrantId',
      'AuthorizationCode.revokeByGrantId',
      'Grant.destroy',
    ]);
  });
});
