/**
 * Attack: a wrong client secret accepted because the provider's secret check is asynchronous
 * (argon2) and a version of oidc-provider uses its answer without awaiting it: a pending
 * Promise is truthy, so every secret would pass.
 * Protection: the secret is verified before the provider runs, inside the request's unit of
 * work (src/oidc/middleware/client-secret-check.ts), and Client#compareClientSecret
 * (src/oidc/provider-internals.ts) only looks that outcome up: synchronous, true only for the
 * client and the secret this request verified, false for anything else (docs/oauth.md, "OAuth
 * 2.0 and OpenID Connect", Client authentication).
 */
import { describe, expect, it } from 'vitest';
import { basic, endpoints, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { presentedSecret } from '../../src/oidc/middleware/client-secret-check.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  server,
  staff,
  clients: { client, other },
} = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'openid', 'offline_access'] },
    other: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only'] },
  },
});

type Answer = { status: number; body: Record<string, unknown> };

/** A form POST to an API endpoint of the production provider, with `authorization` when given. */
async function post(path: string, form: Record<string, string>, authorization?: string): Promise<Answer> {
  const response = await fetch(`${endpoints(server, 'production').api}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(form),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const introspection = (form: Record<string, string>, authorization?: string) => post('/auth/oauth/introspect', form, authorization);
const revocation = (form: Record<string, string>, authorization?: string) => post('/auth/oauth/revoke', form, authorization);
const refused = { status: 401, error: 'invalid_client' };
const outcome = (answer: Answer) => ({ status: answer.status, error: answer.body.error });

async function freshTokens() {
  const { tokens } = await obtainTokens(server, {
    environment: 'production',
    client,
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only offline_access',
    login: staff.users.member,
  });
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  return tokens.body as { access_token: string; refresh_token: string };
}

describe('a client secret is accepted only once verified in its own request', () => {
  it('the right secret by HTTP Basic works at the token, introspection and revocation endpoints', async () => {
    const tokens = await freshTokens();
    const right = basic(client.client_id, client.client_secret);
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const accessToken = refreshed.body.access_token as string;
    expect(await introspection({ token: accessToken }, right)).toMatchObject({ status: 200, body: { active: true } });
    expect((await revocation({ token: accessToken }, right)).status).toBe(200);
    expect(await introspection({ token: accessToken }, right)).toEqual({ status: 200, body: { active: false } });
  });

  it('a wrong secret, or another client’s secret, is invalid_client at each of them', async () => {
    const tokens = await freshTokens();
    for (const secret of ['a-wrong-secret', other.client_secret, `${client.client_secret}x`]) {
      const authorization = basic(client.client_id, secret);
      const token = await post('/auth/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, authorization);
      expect(outcome(token)).toEqual(refused);
      expect(outcome(await introspection({ token: tokens.access_token }, authorization))).toEqual(refused);
      expect(outcome(await revocation({ token: tokens.access_token }, authorization))).toEqual(refused);
    }
    // Nothing was revoked or rotated by the refused requests.
    expect((await introspection({ token: tokens.access_token }, basic(client.client_id, client.client_secret))).body.active).toBe(true);
  });

  it('a secret in the form (client_secret_post) is refused everywhere, alone or next to the right Basic credentials', async () => {
    const { access_token: token } = await freshTokens();
    const inForm = { client_id: client.client_id, client_secret: client.client_secret };
    const right = basic(client.client_id, client.client_secret);
    expect(outcome(await introspection({ token, ...inForm }))).toEqual(refused);
    expect(outcome(await revocation({ token, ...inForm }))).toEqual(refused);
    // Two secrets name no one check: neither is verified, and the provider refuses the Basic one it reads.
    expect(outcome(await introspection({ token, client_secret: client.client_secret }, right))).toEqual(refused);
    expect(outcome(await revocation({ token, client_secret: client.client_secret }, right))).toEqual(refused);
    expect(outcome(await post('/auth/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r'.repeat(43), ...inForm }))).toEqual(
      refused,
    );
    // Pushed requests take no client secret at all (a fapi2 client's assertion only).
    expect(outcome(await post('/auth/oauth/par', { response_type: 'code', client_id: client.client_id }, right))).toEqual(refused);
    expect((await introspection({ token }, right)).body.active).toBe(true);
  });

  it('a provider that used the check without awaiting it still refuses a wrong secret', async () => {
    const prototype = server.runtime.oidc.provider('production').Client.prototype as unknown as {
      compareClientSecret(this: unknown, presented: string): unknown;
    };
    const ours = prototype.compareClientSecret;
    // The library's call as it would be without `await`: the answer is used as it comes.
    const usedWithoutAwait = (check: (this: unknown, presented: string) => unknown) =>
      function compareClientSecret(this: unknown, presented: string) {
        if (check.call(this, presented)) return true;
        return false;
      };
    const wrong = basic(client.client_id, 'a-wrong-secret');
    const right = basic(client.client_id, client.client_secret);
    try {
      prototype.compareClientSecret = usedWithoutAwait(ours);
      expect(outcome(await introspection({ token: 'x'.repeat(43) }, wrong))).toEqual(refused);
      expect(await introspection({ token: 'x'.repeat(43) }, right)).toEqual({ status: 200, body: { active: false } });
      // The hazard this guards against: the same caller around an asynchronous check (as the check once was) lets a wrong secret in.
      prototype.compareClientSecret = usedWithoutAwait(async () => false);
      expect((await introspection({ token: 'x'.repeat(43) }, wrong)).status).toBe(200);
    } finally {
      prototype.compareClientSecret = ours;
    }
    expect(outcome(await introspection({ token: 'x'.repeat(43) }, wrong))).toEqual(refused);
  });
});

describe('the secret a request presents, read as the library reads it (RFC 6749 2.3.1)', () => {
  const b64 = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

  it('takes a Basic id and secret each form-urlencoded, or client_id and client_secret from the form', () => {
    expect(presentedSecret(b64('my%3Aclient:a+b%25c'), undefined)).toEqual({ clientId: 'my:client', secret: 'a b%c' });
    expect(presentedSecret(basic('client', 'p@ss:word'), { token: 'x' })).toEqual({ clientId: 'client', secret: 'p@ss:word' });
    expect(presentedSecret('', { client_id: 'client', client_secret: 's' })).toEqual({ clientId: 'client', secret: 's' });
  });

  it('reads no secret where there is not exactly one, or where the library would read none', () => {
    const cases: [string | undefined, Record<string, unknown> | undefined][] = [
      [basic('client', 's'), { client_secret: 's' }],
      ['Bearer abc', { client_id: 'client', client_secret: 's' }],
      [undefined, { client_id: 'client', client_secret: ['s', 's'] }],
      [undefined, { client_secret: 's' }],
      [b64('client:'), undefined],
      [b64('client-without-colon'), undefined],
      [b64('client:bad%zz'), undefined],
      [b64('client:caf\u00e9'), undefined],
      [`Basic  ${b64('client:s').slice(6)}`, undefined],
      ['Bearer abc', undefined],
      [undefined, undefined],
    ];
    for (const [authorization, form] of cases)
      expect({ authorization, form, presented: presentedSecret(authorization, form) }).toEqual({
        authorization,
        form,
        presented: undefined,
      });
  });
});
