/**
 * The bare oidc-provider both provider baselines run: Almoner's token settings (the same
 * lifetimes, refresh-token rotation, client_secret_basic only, PKCE required, opaque access
 * tokens, RS256 ID tokens, the same scopes and claims), and none of Almoner's storage, checks
 * or bookkeeping. Only the adapter differs: bench/baseline/bare-provider.ts passes the
 * library's in-memory adapter, bench/baseline/durable-provider.ts a one-table Postgres one.
 *
 * The client secret is compared as a plain string (the library's default; Almoner verifies an
 * argon2id hash through its cache).
 *
 * Environment: PORT (the provider), ADMIN_PORT (minting, never measured), CLIENT_ID,
 * CLIENT_SECRET, REDIRECT_URI. A port of 0 (the default) binds an ephemeral one. Prints one
 * JSON line {"ready": true, "issuer", "port", "admin_port"} when listening.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

const DAY = 86_400;
const AUTHORIZATION_LIFETIME = 365 * DAY;
const SCOPE = 'openid read_only';
/** Items minted at once (a durable adapter's inserts overlap; the order never matters). */
const MINT_LANES = 8;
const epoch = () => Math.floor(Date.now() / 1000);

function jwk(alg: 'RS256' | 'ES256') {
  const { privateKey } =
    alg === 'RS256'
      ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
      : crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid: crypto.randomBytes(12).toString('base64url'),
    alg,
    use: 'sig',
  };
}

function configuration(adapter: Configuration['adapter'], client: { id: string; secret: string; redirectUri: string }): Configuration {
  return {
    adapter,
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: [client.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        // ID_TOKEN_ALG=ES256: the id_token question of docs/benchmarks.md ("The ID token's signature").
        id_token_signed_response_alg: process.env.ID_TOKEN_ALG === 'ES256' ? 'ES256' : 'RS256',
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
    issueRefreshToken: async (_ctx, c) => c.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    revokeGrantPolicy: () => true,
    allowOmittingSingleRegisteredRedirectUri: false,
    conformIdTokenClaims: true,
    clockTolerance: 0,
  };
}

/** `n` results of `one`, MINT_LANES at a time. */
async function mintMany<T>(n: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const items: T[] = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(MINT_LANES, n) }, async () => {
      while (next < n) {
        const i = next;
        next += 1;
        items[i] = await one(i);
      }
    }),
  );
  return items;
}

export interface BareProviderOptions {
  /** The adapter factory the provider stores everything through. */
  adapter: Configuration['adapter'];
  /** More routes on the admin port (path → work answered as JSON), e.g. the durable peer's /poke. */
  admin?: Record<string, () => Promise<unknown>>;
  /** Runs on SIGTERM once both servers have closed (e.g. ends a pool). */
  close?: () => Promise<void>;
}

/** Binds, builds the provider on `options.adapter`, serves it and its minting port, prints the ready line. */
export async function serveBareProvider(options: BareProviderOptions): Promise<void> {
  // Bound before anything else, so the issuer names the port actually bound (0: an ephemeral one).
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const clientId = process.env.CLIENT_ID ?? 'bare-client';
  const redirectUri = process.env.REDIRECT_URI ?? 'http://127.0.0.1:9999/callback';
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(
    issuer,
    configuration(options.adapter, { id: clientId, secret: process.env.CLIENT_SECRET ?? 'bare-secret', redirectUri }),
  );

  /** Pre-minted through the provider's own models, as Almoner's harness mints through its own. */
  const mintGrant = (accountId: string) => {
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(SCOPE);
    return grant.save();
  };

  const mintRefreshTokens = async (n: number, scope = SCOPE): Promise<string[]> => {
    const client = await provider.Client.find(clientId);
    return mintMany(n, async (i) => {
      const accountId = `user-${i % 8}`;
      const grantId = await mintGrant(accountId);
      const rt = new provider.RefreshToken({
        accountId,
        client,
        grantId,
        gty: 'authorization_code',
        scope,
        rotations: 0,
        authTime: epoch(),
        nonce: crypto.randomBytes(8).toString('hex'),
        expiresWithSession: false,
      } as never);
      return rt.save();
    });
  };

  const mintCodes = async (n: number): Promise<{ code: string; verifier: string }[]> => {
    const client = await provider.Client.find(clientId);
    return mintMany(n, async (i) => {
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
      return { code: await code.save(), verifier };
    });
  };

  server.on('request', provider.callback());

  // Minting answers on its own port so it never shares a measured connection.
  const admin = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const n = Number(url.searchParams.get('n') ?? 0);
    const extra = options.admin?.[url.pathname];
    const work =
      url.pathname === '/mint/refresh'
        ? mintRefreshTokens(n, url.searchParams.get('scope') ?? undefined)
        : url.pathname === '/mint/code'
          ? mintCodes(n)
          : extra
            ? extra()
            : Promise.reject(new Error('unknown'));
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
    server.close(() =>
      admin.close(() => {
        void (options.close?.() ?? Promise.resolve()).finally(() => process.exit(0));
      }),
    );
  });
}
