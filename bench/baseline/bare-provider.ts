/**
 * Baseline for the token-endpoint scenarios: a bare oidc-provider with its own in-memory
 * adapter and Almoner's token settings (the same lifetimes, refresh-token rotation,
 * client_secret_basic only, PKCE required, opaque access tokens, RS256 ID tokens, the same
 * scopes and claims), and none of Almoner's storage, checks or bookkeeping.
 *
 * Differences that are the library's defaults, kept on purpose: the client secret is compared
 * as a plain string (Almoner verifies an argon2id hash through its cache), and storage is a
 * process-local LRU map (Almoner's is Postgres).
 *
 * Environment: PORT (the provider), ADMIN_PORT (minting, never measured), CLIENT_ID,
 * CLIENT_SECRET, REDIRECT_URI. A port of 0 (the default) binds an ephemeral one. Prints one
 * JSON line {"ready": true, "issuer", "port", "admin_port"} when listening.
 *
 * Run: node --import tsx bench/baseline/bare-provider.ts
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

// Bound before anything else, so the issuer names the port actually bound (0: an ephemeral one).
const server = http.createServer();
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const clientId = process.env.CLIENT_ID ?? 'bare-client';
const clientSecret = process.env.CLIENT_SECRET ?? 'bare-secret';
const redirectUri = process.env.REDIRECT_URI ?? 'http://127.0.0.1:9999/callback';
const issuer = `http://127.0.0.1:${port}`;

// The library's own in-memory adapter and LRU, with room for every pre-minted token (its
// default store keeps 1,000 entries, fewer than a run consumes).
const { default: MemoryAdapter } = (await import('oidc-provider/lib/adapters/memory_adapter.js' as string)) as { default: new (model: string, store: unknown) => unknown };
const { default: LRU } = (await import('oidc-provider/lib/helpers/lru.js' as string)) as { default: new (options: { maxSize: number }) => unknown };
const store = new LRU({ maxSize: 2_000_000 });

const DAY = 86_400;
const AUTHORIZATION_LIFETIME = 365 * DAY;
const epoch = () => Math.floor(Date.now() / 1000);

function jwk(alg: 'RS256' | 'ES256') {
  const { privateKey } = alg === 'RS256' ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }) : crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: crypto.randomBytes(12).toString('base64url'), alg, use: 'sig' };
}

const configuration: Configuration = {
  adapter: function AdapterFactory(model: string) {
    return new MemoryAdapter(model, store);
  } as unknown as Configuration['adapter'],
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
      scope: 'read_only read_write openid offline_access',
    },
  ],
  async findAccount(_ctx, sub) {
    return { accountId: sub, claims: async () => ({ sub, email: 'staff@bench.example.org', email_verified: true, name: 'Bench Staff' }) };
  },
  jwks: { keys: [jwk('RS256'), jwk('ES256')] } as Configuration['jwks'],
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  routes: {
    authorization: '/oauth/authorize',
    token: '/auth/oauth/token',
    userinfo: '/auth/oauth/userinfo',
    revocation: '/auth/oauth/revoke',
    introspection: '/auth/oauth/introspect',
    jwks: '/.well-known/jwks.json',
  },
  features: {
    devInteractions: { enabled: false },
    userinfo: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
  },
  responseTypes: ['code'],
  pkce: { required: () => true },
  clientAuthMethods: ['client_secret_basic'],
  scopes: ['read_only', 'read_write', 'openid', 'offline_access', 'read:bank_accounts', 'sync:connected_accounts'],
  claims: { openid: ['sub', 'email', 'email_verified', 'name'] },
  subjectTypes: ['public'],
  ttl: {
    AuthorizationCode: 60,
    AccessToken: 900,
    IdToken: 3600,
    Interaction: 3600,
    Session: 14 * DAY,
    Grant: AUTHORIZATION_LIFETIME,
    RefreshToken: ((_ctx: unknown, token: { iiat?: number; iat?: number }) => {
      const firstIssue = token.iiat ?? token.iat ?? epoch();
      return Math.max(1, Math.min(31 * DAY, firstIssue + AUTHORIZATION_LIFETIME - epoch()));
    }) as never,
  },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  expiresWithSession: async () => false,
  revokeGrantPolicy: () => true,
  allowOmittingSingleRegisteredRedirectUri: false,
  conformIdTokenClaims: true,
  clockTolerance: 0,
};

const provider = new Provider(issuer, configuration);
const SCOPE = 'openid read_only';

/** Pre-minted through the provider's own models, as Almoner's harness mints through its own. */
async function mintGrant(accountId: string) {
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope(SCOPE);
  return grant.save();
}

async function mintRefreshTokens(n: number): Promise<string[]> {
  const client = await provider.Client.find(clientId);
  const tokens: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const accountId = `user-${i % 8}`;
    const grantId = await mintGrant(accountId);
    const rt = new provider.RefreshToken({ accountId, client, grantId, gty: 'authorization_code', scope: SCOPE, rotations: 0, authTime: epoch(), nonce: crypto.randomBytes(8).toString('hex'), expiresWithSession: false } as never);
    tokens.push(await rt.save());
  }
  return tokens;
}

async function mintCodes(n: number): Promise<{ code: string; verifier: string }[]> {
  const client = await provider.Client.find(clientId);
  const codes: { code: string; verifier: string }[] = [];
  for (let i = 0; i < n; i += 1) {
    const accountId = `user-${i % 8}`;
    const grantId = await mintGrant(accountId);
    const verifier = crypto.randomBytes(32).toString('base64url');
    const code = new provider.AuthorizationCode({
      accountId,
      client,
      grantId,
      scope: SCOPE,
      redirectUri,
      codeChallenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      codeChallengeMethod: 'S256',
      nonce: crypto.randomBytes(8).toString('hex'),
      authTime: epoch(),
      expiresWithSession: false,
    } as never);
    codes.push({ code: await code.save(), verifier });
  }
  return codes;
}

server.on('request', provider.callback());

// Minting answers on its own port so it never shares a measured connection.
const admin = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://admin');
  const n = Number(url.searchParams.get('n') ?? 0);
  const work = url.pathname === '/mint/refresh' ? mintRefreshTokens(n) : url.pathname === '/mint/code' ? mintCodes(n) : Promise.reject(new Error('unknown'));
  work.then(
    (items) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items }));
    },
    (error: Error) => {
      res.statusCode = 500;
      res.end(error.message);
    },
  );
});
await new Promise<void>((resolve) => admin.listen(Number(process.env.ADMIN_PORT ?? 0), '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ ready: true, issuer, port, admin_port: (admin.address() as AddressInfo).port })}\n`);
process.on('SIGTERM', () => {
  server.closeAllConnections();
  admin.closeAllConnections();
  server.close(() => admin.close(() => process.exit(0)));
});
