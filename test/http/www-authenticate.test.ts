/**
 * Every 401 carries WWW-Authenticate (RFC 9110 15.5.2), well-formed and naming the scheme
 * the endpoint accepts: Basic with the OAuth error where clients authenticate (RFC 6749 5.2:
 * token, introspection, revocation; for invalid_client and for the 401 invalid_grant of
 * docs/oauth.md), Bearer at UserInfo (RFC 6750 3) and on every gateway operation (access
 * tokens and API keys are both Bearer credentials). A table drives each endpoint and kind
 * of failure; every gateway operation is swept.
 */
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../src/accounts/service.js';
import { addMember, removeMember } from '../../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { parseChallenges, type Challenge } from '../helpers/challenge.js';
import { authorize, basic, endpoints, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { apiKeyFor, apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client, sandboxClient },
} = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid', 'offline_access'] },
    sandboxClient: { environment: 'sandbox', redirectUris: ['http://127.0.0.1:9999/callback'], scopes: ['read_only', 'openid'] },
  },
});

interface Answer {
  status: number;
  challenge: string | null;
  body: Record<string, unknown>;
}

const api = () => endpoints(server, 'production').api;

async function send(url: string, init: { method?: string; authorization?: string; form?: Record<string, string> } = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    headers: {
      ...(init.authorization ? { authorization: init.authorization } : {}),
      ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: init.form ? new URLSearchParams(init.form) : undefined,
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const good = () => basic(client.client_id, client.client_secret);
const wrongSecret = () => basic(client.client_id, `${client.client_secret}x`);
const unknownClient = () => basic('unknown-client', 'whatever-secret');

/** What each case needs made beforehand (flows, keys), filled in by beforeAll. */
const made = {} as {
  wrongVerifierCode: string;
  replayedCode: { code: string; verifier: string };
  usedRefreshToken: string;
  revokedAccessToken: string;
  formerMemberToken: string;
  liveAccessToken: string;
  revokedApiKey: string;
  apiKey: string;
};

beforeAll(async () => {
  const flow = (login = staff.users.owner, scope = 'openid read_only') =>
    obtainTokens(server, { environment: 'production', client, clientId: client.client_id, redirectUri: REDIRECT, scope, login });
  // A code whose exchange is attempted with the wrong verifier (a refused exchange leaves it unused).
  const pending = await authorize(server, {
    environment: 'production',
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'read_only',
    login: staff.users.member,
  });
  made.wrongVerifierCode = pending.callback.searchParams.get('code')!;
  const exchanged = await flow(staff.users.admin);
  made.replayedCode = { code: exchanged.code, verifier: exchanged.verifier };
  const refreshed = await flow(staff.users.read_only, 'read_only');
  made.usedRefreshToken = refreshed.tokens.body.refresh_token as string;
  expect(
    (await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: made.usedRefreshToken })).status,
  ).toBe(200);
  const live = await flow();
  made.liveAccessToken = live.tokens.body.access_token as string;
  // An authorization ended by its own client: its access token is dead everywhere.
  const other = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT], scopes: ['openid', 'read_only'] });
  const revoked = await obtainTokens(server, {
    environment: 'production',
    client: other,
    clientId: other.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only',
    login: staff.users.owner,
  });
  made.revokedAccessToken = revoked.tokens.body.access_token as string;
  expect(
    (
      await send(`${api()}/auth/oauth/revoke`, {
        authorization: basic(other.client_id, other.client_secret),
        form: { token: made.revokedAccessToken },
      })
    ).status,
  ).toBe(200);
  // A user who approved and then left the nonprofit.
  const email = `leaver-${Date.now()}@example.org`;
  await addUser(t.db, { email, password: 'pw-leaver-1' }, MIN_PASSWORD_PARAMS);
  await addMember(t.db, { org: staff.ein, email, role: 'member' });
  const left = await obtainTokens(server, {
    environment: 'production',
    client,
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only',
    login: { email, password: 'pw-leaver-1' },
  });
  made.formerMemberToken = left.tokens.body.access_token as string;
  await removeMember(t.db, { org: staff.ein, email });
  made.apiKey = await apiKeyFor(t.db, staff, 'production');
  const toRevoke = await createApiKey(t.db, { org: staff.ein, environment: 'production' });
  await revokeApiKey(t.db, toRevoke.id);
  made.revokedApiKey = toRevoke.key;
});

/** The one challenge of a 401, parsed (a malformed header throws). */
function challengeOf(answer: Answer): Challenge {
  expect(answer.status).toBe(401);
  expect(answer.challenge, 'a 401 without WWW-Authenticate').toBeTruthy();
  const challenges = parseChallenges(answer.challenge!);
  expect(challenges).toHaveLength(1);
  return challenges[0]!;
}

/** Client-authenticated endpoints: Basic, realm = the issuer, the OAuth error of the body. */
function expectBasic(answer: Answer, error: string, realm = api()) {
  const challenge = challengeOf(answer);
  expect(challenge.scheme).toBe('Basic');
  expect(challenge.params.realm).toBe(realm);
  expect(answer.body.error).toBe(error);
  expect(challenge.params.error).toBe(error);
  if (typeof answer.body.error_description === 'string') expect(challenge.params.error_description).toBe(answer.body.error_description);
}

/** UserInfo: Bearer, realm = the issuer; error="invalid_token" once a token was presented (RFC 6750 3.1). */
function expectUserinfoBearer(answer: Answer, presented: boolean) {
  if (presented) {
    const challenge = challengeOf(answer);
    expect(challenge.scheme).toBe('Bearer');
    expect(challenge.params.realm).toBe(api());
    expect(challenge.params.error).toBe('invalid_token');
    return;
  }
  // Nothing presented: both schemes UserInfo takes, Bearer and (for bank-data clients' tokens) DPoP with its algorithms.
  expect(answer.status).toBe(401);
  const challenges = parseChallenges(answer.challenge ?? '');
  expect(challenges.map((c) => c.scheme)).toEqual(['Bearer', 'DPoP']);
  for (const challenge of challenges) {
    expect(challenge.params.realm).toBe(api());
    expect(challenge.params).not.toHaveProperty('error');
  }
  expect(challenges[1]!.params.algs).toBe('PS256 ES256 EdDSA');
}

/** The gateway: Bearer (for access tokens and API keys alike), error="invalid_token" once something was presented. */
function expectGatewayBearer(answer: Answer, presented: boolean) {
  const challenge = challengeOf(answer);
  expect(challenge.scheme).toBe('Bearer');
  expect(challenge.params.realm).toBe('almoner');
  if (presented) expect(challenge.params.error).toBe('invalid_token');
  else expect(challenge.params).not.toHaveProperty('error');
}

const token = (form: Record<string, string>, authorization?: string) => send(`${api()}/auth/oauth/token`, { form, authorization });
const unknownCodeForm = () => ({ grant_type: 'authorization_code', code: 'c'.repeat(43), code_verifier: 'v'.repeat(43) });

/** Basic credentials that are bad rather than malformed requests: 401 invalid_client, as docs/oauth.md ("OAuth 2.0 and OpenID Connect", Token endpoint) names bad client credentials. */
const b64 = (text: string) => Buffer.from(text).toString('base64');
const MALFORMED_BASIC: [string, string][] = [
  ['Basic with a value that is not base64', 'Basic !!!not-base64!!!'],
  ['Basic without a colon', `Basic ${b64('just-a-client-id')}`],
  ['Basic with an empty secret', `Basic ${b64(`${'client'}:`)}`],
  ['Basic with an empty client id', `Basic ${b64(':some-secret')}`],
  ['Basic with a bad percent-encoding', `Basic ${b64('client%zz:secret')}`],
];

const CLIENT_AUTH_CASES: [string, () => Promise<Answer>, string][] = [
  ['token: no client authentication', () => token(unknownCodeForm()), 'invalid_client'],
  ['token: the Basic scheme with no credentials', () => token(unknownCodeForm(), 'Basic'), 'invalid_client'],
  ['token: a Bearer credential instead of Basic', () => token(unknownCodeForm(), 'Bearer abc'), 'invalid_client'],
  ['token: an unknown client', () => token(unknownCodeForm(), unknownClient()), 'invalid_client'],
  ...MALFORMED_BASIC.map(([name, header]): [string, () => Promise<Answer>, string] => [
    `token: ${name}`,
    () => token(unknownCodeForm(), header),
    'invalid_client',
  ]),
  ['token: a wrong secret', () => token(unknownCodeForm(), wrongSecret()), 'invalid_client'],
  [
    'token: a secret in the body next to Basic',
    () => token({ ...unknownCodeForm(), client_secret: client.client_secret }, good()),
    'invalid_client',
  ],
  [
    'token: a secret in the body alone',
    () => token({ ...unknownCodeForm(), client_id: client.client_id, client_secret: client.client_secret }),
    'invalid_client',
  ],
  [
    'token: the sandbox client on the production host',
    () => token(unknownCodeForm(), basic(sandboxClient.client_id, sandboxClient.client_secret)),
    'invalid_client',
  ],
  ['token: an unknown code (401 invalid_grant)', () => token(unknownCodeForm(), good()), 'invalid_grant'],
  [
    'token: a wrong code_verifier',
    () =>
      token({ grant_type: 'authorization_code', code: made.wrongVerifierCode, code_verifier: oauth.generateRandomCodeVerifier() }, good()),
    'invalid_grant',
  ],
  [
    'token: a replayed code',
    () => token({ grant_type: 'authorization_code', ...made.replayedCode, code_verifier: made.replayedCode.verifier }, good()),
    'invalid_grant',
  ],
  ['token: an unknown refresh token', () => token({ grant_type: 'refresh_token', refresh_token: 'r'.repeat(43) }, good()), 'invalid_grant'],
  [
    'token: a reused refresh token',
    () => token({ grant_type: 'refresh_token', refresh_token: made.usedRefreshToken }, good()),
    'invalid_grant',
  ],
  ...(['introspect', 'revoke'] as const).flatMap((endpoint): [string, () => Promise<Answer>, string][] => {
    const call = (authorization?: string, extra: Record<string, string> = {}) =>
      send(`${api()}/auth/oauth/${endpoint}`, { authorization, form: { token: made.liveAccessToken, ...extra } });
    return [
      [`${endpoint}: no client authentication`, () => call(), 'invalid_client'],
      [`${endpoint}: a Bearer credential instead of Basic`, () => call(`Bearer ${made.liveAccessToken}`), 'invalid_client'],
      [`${endpoint}: an unknown client`, () => call(unknownClient()), 'invalid_client'],
      ...MALFORMED_BASIC.map(([name, header]): [string, () => Promise<Answer>, string] => [
        `${endpoint}: ${name}`,
        () => call(header),
        'invalid_client',
      ]),
      [`${endpoint}: a wrong secret`, () => call(wrongSecret()), 'invalid_client'],
      [
        `${endpoint}: a secret in the body`,
        () => call(undefined, { client_id: client.client_id, client_secret: client.client_secret }),
        'invalid_client',
      ],
      [
        `${endpoint}: the sandbox client on the production host`,
        () => call(basic(sandboxClient.client_id, sandboxClient.client_secret)),
        'invalid_client',
      ],
    ];
  }),
];

describe('401 at the client-authenticated endpoints (token, introspection, revocation)', () => {
  it.each(CLIENT_AUTH_CASES)('%s: Basic challenge with the error', async (_name, call, error) => {
    expectBasic(await call(), error);
  });
});

const USERINFO_CASES: [string, () => Promise<Answer>, boolean][] = [
  ['GET without a token', () => send(`${api()}/auth/oauth/userinfo`), false],
  ['POST without a token', () => send(`${api()}/auth/oauth/userinfo`, { method: 'POST' }), false],
  ['an unknown token', () => send(`${api()}/auth/oauth/userinfo`, { authorization: `Bearer ${'a'.repeat(43)}` }), true],
  [
    'a token of a revoked authorization',
    () => send(`${api()}/auth/oauth/userinfo`, { authorization: `Bearer ${made.revokedAccessToken}` }),
    true,
  ],
  ['a token of a user who left', () => send(`${api()}/auth/oauth/userinfo`, { authorization: `Bearer ${made.formerMemberToken}` }), true],
  ['an API key', () => send(`${api()}/auth/oauth/userinfo`, { authorization: `Bearer ${made.apiKey}` }), true],
  [
    'a token in the form body that is unknown',
    () => send(`${api()}/auth/oauth/userinfo`, { form: { access_token: 'a'.repeat(43) } }),
    true,
  ],
];

describe('401 on the sandbox API host', () => {
  it('names the sandbox issuer as the realm', async () => {
    const sandbox = endpoints(server, 'sandbox').api;
    expectBasic(await send(`${sandbox}/auth/oauth/token`, { form: unknownCodeForm() }), 'invalid_client', sandbox);
    expectBasic(
      await send(`${sandbox}/auth/oauth/token`, { form: unknownCodeForm(), authorization: basic(client.client_id, client.client_secret) }),
      'invalid_client',
      sandbox,
    );
    expectBasic(
      await send(`${sandbox}/auth/oauth/token`, {
        form: unknownCodeForm(),
        authorization: basic(sandboxClient.client_id, sandboxClient.client_secret),
      }),
      'invalid_grant',
      sandbox,
    );
  });
});

describe('401 at UserInfo', () => {
  it.each(USERINFO_CASES)('%s: Bearer challenge', async (_name, call, presented) => {
    expectUserinfoBearer(await call(), presented);
  });
});

/** A concrete path of a gateway operation (parameters are never reached: authentication comes first). */
const concrete = (path: string) => path.replace(/:ein\b/, '123456789').replace(/:[a-z_]+/g, 'x1');
const gatewayCall = (spec: (typeof GATEWAY_ROUTES)[number], authorization?: string) =>
  apiRequest(server, 'production', spec.method.toUpperCase(), concrete(spec.path), {
    headers: { ...(authorization ? { authorization } : {}), ...(spec.pathVersioned ? {} : { 'api-version': spec.versions[0]! }) },
    ...(spec.body ? { json: {} } : {}),
  });
const asAnswer = (r: Awaited<ReturnType<typeof apiRequest>>): Answer => ({
  status: r.status,
  challenge: r.headers.get('www-authenticate'),
  body: r.body,
});

describe('401 on the gateway (/v1, FDX, DAF)', () => {
  const operations = GATEWAY_ROUTES.map((spec) => [`${spec.method.toUpperCase()} ${spec.path}`, spec] as const);

  it.each(operations)('%s without credentials, with an unknown bearer and with client credentials', async (_name, spec) => {
    expectGatewayBearer(asAnswer(await gatewayCall(spec)), false);
    expectGatewayBearer(asAnswer(await gatewayCall(spec, `Bearer ${'t'.repeat(43)}`)), true);
    expectGatewayBearer(asAnswer(await gatewayCall(spec, good())), true);
  });

  const donations = GATEWAY_ROUTES.find((s) => s.path === '/v1/donations' && s.method === 'get')!;
  const fdx = GATEWAY_ROUTES.find((s) => s.credentials === 'access_token')!;
  const daf = GATEWAY_ROUTES.find((s) => s.callers?.includes('fund_provider'))!;
  const CASES: [string, () => Promise<Answer>][] = [
    ['/v1: a revoked API key', async () => asAnswer(await gatewayCall(donations, `Bearer ${made.revokedApiKey}`))],
    ['/v1: an unknown API key', async () => asAnswer(await gatewayCall(donations, `Bearer alm_live_${'A'.repeat(32)}`))],
    [
      '/v1: an access token of a revoked authorization',
      async () => asAnswer(await gatewayCall(donations, `Bearer ${made.revokedAccessToken}`)),
    ],
    ['/v1: an access token of a user who left', async () => asAnswer(await gatewayCall(donations, `Bearer ${made.formerMemberToken}`))],
    ['/v1: a malformed Authorization header', async () => asAnswer(await gatewayCall(donations, 'Bearer'))],
    ['FDX: an API key (access tokens only)', async () => asAnswer(await gatewayCall(fdx, `Bearer ${made.apiKey}`))],
    ['FDX: an access token of a revoked authorization', async () => asAnswer(await gatewayCall(fdx, `Bearer ${made.revokedAccessToken}`))],
    ['DAF: a revoked API key', async () => asAnswer(await gatewayCall(daf, `Bearer ${made.revokedApiKey}`))],
  ];

  it.each(CASES)('%s: Bearer challenge with invalid_token', async (_name, call) => {
    expectGatewayBearer(await call(), true);
  });
});

describe('the WWW-Authenticate parser used above', () => {
  it('reads well-formed challenges and rejects malformed ones', () => {
    expect(parseChallenges('Bearer realm="almoner", error="invalid_token"')).toEqual([
      { scheme: 'Bearer', params: { realm: 'almoner', error: 'invalid_token' } },
    ]);
    expect(parseChallenges('Basic realm="a \\"b\\"", charset=UTF-8, Bearer realm=x')).toEqual([
      { scheme: 'Basic', params: { realm: 'a "b"', charset: 'UTF-8' } },
      { scheme: 'Bearer', params: { realm: 'x' } },
    ]);
    expect(parseChallenges('Bearer')).toEqual([{ scheme: 'Bearer', params: {} }]);
    for (const bad of [
      '',
      'Bearer realm="unterminated',
      'Basic realm="a" error="b"',
      'Bearer realm="a", realm="b"',
      'Bearer =x',
      'Bearer realm="a"; error="b"',
      '"Bearer"',
      'Bearer realm="caf\u00e9\n"',
    ]) {
      expect(() => parseChallenges(bad), bad).toThrow(/malformed/);
    }
  });
});
