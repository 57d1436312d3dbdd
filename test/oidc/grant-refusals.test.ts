import * as oauth from 'oauth4webapi';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { authorize, basic, endpoints, obtainTokens, tokenRequest, type TokenResult } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { GRANT_REFUSALS } from '../../src/oidc/grant-refusals.js';

// Each invalid_grant says why, keeps its 401 (docs/oauth.md, "OAuth 2.0 and
// OpenID Connect", invalid_grant says why) and never repeats the presented value.
const DAY = 86_400;
const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client, other },
} = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT, 'https://app.example.org/other'] },
    other: { environment: 'production', redirectUris: [REDIRECT] },
  },
});
afterEach(() => {
  vi.useRealTimers();
});

const signIn = () =>
  authorize(server, {
    environment: 'production',
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'read_only',
    login: staff.users.member,
  });
const tokens = async () =>
  (
    await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    })
  ).tokens;
const exchange = (code: string, verifier: string, extra: Record<string, string> = {}, as = client) =>
  tokenRequest(server, 'production', as, { grant_type: 'authorization_code', code, code_verifier: verifier, ...extra });
const refresh = (refreshToken: string, as = client) =>
  tokenRequest(server, 'production', as, { grant_type: 'refresh_token', refresh_token: refreshToken });

function expectRefusal(response: TokenResult, description: string, presented: string) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ error: 'invalid_grant', error_description: description });
  expect(JSON.stringify(response.body)).not.toContain(presented);
}

describe('invalid_grant at the token endpoint: authorization codes', () => {
  it('an expired code', async () => {
    const result = await signIn();
    const code = result.callback.searchParams.get('code')!;
    const row = await t.db
      .selectFrom('oidc_models')
      .select(['id', 'payload'])
      .where('model', '=', 'AuthorizationCode')
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    // Age the stored code past its 60 seconds (the provider checks its exp claim).
    const payload = row.payload as { iat: number; exp: number };
    await t.db
      .updateTable('oidc_models')
      .set({ payload: JSON.stringify({ ...payload, iat: payload.iat - 61, exp: payload.exp - 61 }) })
      .where('id', '=', row.id)
      .execute();
    expectRefusal(await exchange(code, result.verifier), GRANT_REFUSALS.codeExpired, code);
  });

  it('a replayed code, then the same code once its authorization is revoked', async () => {
    const result = await signIn();
    const code = result.callback.searchParams.get('code')!;
    expect((await exchange(code, result.verifier)).status).toBe(200);
    expectRefusal(await exchange(code, result.verifier), GRANT_REFUSALS.codeUsed, code);
    expectRefusal(await exchange(code, result.verifier), GRANT_REFUSALS.revoked, code);
  });

  it('a wrong code_verifier', async () => {
    const result = await signIn();
    const code = result.callback.searchParams.get('code')!;
    const verifier = oauth.generateRandomCodeVerifier();
    expectRefusal(await exchange(code, verifier), GRANT_REFUSALS.verifierMismatch, verifier);
  });

  it('a redirect_uri other than the authorization request’s', async () => {
    const result = await signIn();
    const code = result.callback.searchParams.get('code')!;
    expectRefusal(
      await exchange(code, result.verifier, { redirect_uri: 'https://app.example.org/other' }),
      GRANT_REFUSALS.redirectMismatch,
      code,
    );
  });

  it('a code issued to another client', async () => {
    const result = await signIn();
    const code = result.callback.searchParams.get('code')!;
    expectRefusal(await exchange(code, result.verifier, {}, other), GRANT_REFUSALS.codeOtherClient, code);
    // The refusal spent nothing: its own client still exchanges it.
    expect((await exchange(code, result.verifier)).status).toBe(200);
  });

  it('an unknown code', async () => {
    const code = 'x'.repeat(43);
    expectRefusal(await exchange(code, oauth.generateRandomCodeVerifier()), GRANT_REFUSALS.codeUnknown, code);
  });
});

describe('invalid_grant at the token endpoint: refresh tokens', () => {
  it('an unknown refresh token', async () => {
    const value = 'y'.repeat(43);
    expectRefusal(await refresh(value), GRANT_REFUSALS.refreshUnknown, value);
  });

  it('a refresh token issued to another client', async () => {
    const { body } = await tokens();
    const value = body.refresh_token as string;
    expectRefusal(await refresh(value, other), GRANT_REFUSALS.refreshOtherClient, value);
    expect((await refresh(value)).status).toBe(200);
  });

  it('a refresh token used twice, then its successor (the authorization was revoked)', async () => {
    const { body } = await tokens();
    const value = body.refresh_token as string;
    const rotated = await refresh(value);
    expect(rotated.status).toBe(200);
    expectRefusal(await refresh(value), GRANT_REFUSALS.refreshUsed, value);
    expectRefusal(await refresh(rotated.body.refresh_token as string), GRANT_REFUSALS.revoked, rotated.body.refresh_token as string);
  });

  it('a refresh token of a revoked authorization (RFC 7009 revocation of the token, or of its access token)', async () => {
    const revoke = (token: string) =>
      fetch(`${endpoints(server, 'production').api}/auth/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
        body: new URLSearchParams({ token }),
      });
    const first = await tokens();
    expect((await revoke(first.body.refresh_token as string)).status).toBe(200);
    expectRefusal(await refresh(first.body.refresh_token as string), GRANT_REFUSALS.revoked, first.body.refresh_token as string);
    const second = await tokens();
    expect((await revoke(second.body.access_token as string)).status).toBe(200);
    expectRefusal(await refresh(second.body.refresh_token as string), GRANT_REFUSALS.revoked, second.body.refresh_token as string);
    // Another client holding a revoked token learns nothing about it.
    expectRefusal(
      await refresh(second.body.refresh_token as string, other),
      GRANT_REFUSALS.refreshUnknown,
      second.body.refresh_token as string,
    );
  });

  it('a refresh token unused for 31 days', async () => {
    const start = new Date('2027-03-01T00:00:00Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const { body } = await tokens();
    vi.setSystemTime(start + (31 * DAY + 1) * 1000);
    expectRefusal(await refresh(body.refresh_token as string), GRANT_REFUSALS.refreshExpired, body.refresh_token as string);
  });

  it('a refresh past the 365-day cap, although refreshed every 30 days', async () => {
    const start = new Date('2027-01-01T00:00:00Z').getTime();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    let value = (await tokens()).body.refresh_token as string;
    for (let day = 30; day <= 360; day += 30) {
      vi.setSystemTime(start + day * DAY * 1000);
      const next = await refresh(value);
      expect(next.status).toBe(200);
      value = next.body.refresh_token as string;
    }
    vi.setSystemTime(start + (365 * DAY + 1) * 1000);
    expectRefusal(await refresh(value), GRANT_REFUSALS.capReached, value);
  });
});
