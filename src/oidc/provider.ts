import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { PostgresAdapter, type ConsumeConflictHandler } from './adapter.js';
import { makeFindAccount } from './account.js';
import type { Keygrip } from './cookie-keys.js';
import type { ClientSecretCache } from './client-secret-cache.js';
import { findClient, type ClientRow } from './clients/repository.js';
import { redirectUriMatches } from './clients/redirect-uris.js';
import { FDX_SCOPES, SCOPES } from '../accounts/scopes.js';
import { errorPageFor } from './error-page.js';
import { makeLoadExistingGrant } from './existing-grant.js';
import { AUTHORIZATION_LIFETIME_SECONDS } from './authorizations.js';

import { ACCESS_TOKEN_TTL, AUTHORIZATION_CODE_TTL, ID_TOKEN_TTL, INTERACTION_TTL, REFRESH_TOKEN_TTL, SESSION_TTL } from './lifetimes.js';

export { ACCESS_TOKEN_TTL, AUTHORIZATION_CODE_TTL, ID_TOKEN_TTL, INTERACTION_TTL, REFRESH_TOKEN_TTL, SESSION_TTL };

export interface ProviderOptions {
  environment: Environment;
  /** The environment's API origin: the issuer. */
  issuer: string;
  /** The environment's dashboard origin, where the authorization endpoint and pages live. */
  dashboardOrigin: string;
  db: Db;
  jwks: { keys: Record<string, unknown>[] };
  /** Signs and verifies the provider's cookies (a live keygrip over the rotating cookie keys). */
  cookieKeys: Keygrip;
  secretCache: ClientSecretCache;
  onConsumeConflict?: ConsumeConflictHandler;
  refreshGraceSeconds?: number;
}

export function authorizationPath(environment: Environment): string {
  return environment === 'production' ? '/oauth/authorize' : '/oauth/sandbox/authorize';
}

export const INTERACTION_PREFIX = '/oauth/interaction';
export const API_ROUTES = {
  token: '/auth/oauth/token',
  userinfo: '/auth/oauth/userinfo',
  revocation: '/auth/oauth/revoke',
  introspection: '/auth/oauth/introspect',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
  /** RFC 8414 metadata: the discovery document without its OpenID-only members (middleware/discovery.ts). */
  oauthMetadata: '/.well-known/oauth-authorization-server',
} as const;

const epoch = () => Math.floor(Date.now() / 1000);

/** Refresh tokens live 31 days from now, but never past 365 days from the first issue (iiat). */
export function refreshTokenTtl(_ctx: unknown, token: { iiat?: number; iat?: number }): number {
  const firstIssue = token.iiat ?? token.iat ?? epoch();
  return Math.max(1, Math.min(REFRESH_TOKEN_TTL, firstIssue + AUTHORIZATION_LIFETIME_SECONDS - epoch()));
}

export function toClientMetadata(row: ClientRow, environment: Environment) {
  return {
    client_id: row.client_id,
    client_secret: row.client_secret_hash,
    client_name: row.name,
    ...(row.logo_uri ? { logo_uri: row.logo_uri } : {}),
    redirect_uris: row.redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'RS256',
    scope: row.scopes.join(' '),
    authorization_subject: row.subject_type,
    ip_allow_list: row.ip_allow_list,
    almoner_environment: environment,
  };
}

/** The provider's cookies (session, interaction, resume): HttpOnly, SameSite=Lax, Secure on https. */
export function providerCookieOptions(dashboardOrigin: string) {
  return { signed: true, httpOnly: true, sameSite: 'lax' as const, secure: dashboardOrigin.startsWith('https:'), overwrite: true };
}

export function createProvider(options: ProviderOptions): Provider {
  const { environment, db } = options;
  const base: PostgresAdapterFactory = (model) => new PostgresAdapter(model, { db, environment, onConsumeConflict: options.onConsumeConflict, refreshGraceSeconds: options.refreshGraceSeconds });
  const cookie = providerCookieOptions(options.dashboardOrigin);
  const clients = new ClientAdapter(db, environment);

  const configuration: Configuration = {
    adapter: function AdapterFactory(model: string) {
      if (model === 'Client') return clients;
      return base(model);
    } as unknown as Configuration['adapter'],
    clients: [],
    findAccount: makeFindAccount(db, environment) as unknown as Configuration['findAccount'],
    jwks: options.jwks as Configuration['jwks'],
    cookies: {
      names: { session: `alm_${environment}_session`, interaction: `alm_${environment}_interaction`, resume: `alm_${environment}_resume` },
      // The library accepts a keygrip in place of an array (it hands it to `cookies` as is).
      keys: options.cookieKeys as unknown as string[],
      long: cookie,
      short: cookie,
    },
    routes: {
      authorization: authorizationPath(environment),
      token: API_ROUTES.token,
      userinfo: API_ROUTES.userinfo,
      revocation: API_ROUTES.revocation,
      introspection: API_ROUTES.introspection,
      jwks: API_ROUTES.jwks,
    },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PREFIX}/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      claimsParameter: { enabled: false },
      registration: { enabled: false },
      userinfo: { enabled: true },
      // A client may revoke only its own tokens; another client's token is ignored (200, RFC 7009).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: {
        enabled: true,
        // A client learns about its own tokens only.
        allowedPolicy: async (ctx, client, token) => token.clientId === client.clientId,
      },
    },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      introspectionSigningAlgValues: ['RS256', 'ES256'],
      authorizationSigningAlgValues: ['RS256', 'ES256'],
    },
    scopes: [...SCOPES],
    claims: { openid: ['sub', 'email', 'email_verified', 'name'] },
    subjectTypes: ['public'],
    ttl: {
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      AccessToken: ACCESS_TOKEN_TTL,
      IdToken: ID_TOKEN_TTL,
      Interaction: INTERACTION_TTL,
      Session: SESSION_TTL,
      Grant: AUTHORIZATION_LIFETIME_SECONDS,
      RefreshToken: refreshTokenTtl as never,
    },
    rotateRefreshToken: true,
    // Every code grant gets a refresh token (offline_access is consented to and echoed in the
    // scope, but issuance does not depend on it), and tokens outlive the browser session that
    // approved them.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    revokeGrantPolicy: () => true,
    // A new authorization (Grant) per consent, with its own 365-day clock, unless a live
    // authorization already covers the request (existing-grant.ts).
    loadExistingGrant: makeLoadExistingGrant(db, environment),
    allowOmittingSingleRegisteredRedirectUri: false,
    extraParams: {
      // Set by our authorization pre-middleware from the raw request (see authorization-request.ts).
      x_requested_scope: validateRequestedScopes,
      x_nonce: null,
      nonce: (ctx: KoaContextWithOIDC, value: string | undefined) => {
        if (!value && !ctx.oidc.params?.x_nonce) throw new errors.InvalidRequest("missing required parameter 'nonce'");
      },
    } as unknown as Configuration['extraParams'],
    extraClientMetadata: {
      properties: ['authorization_subject', 'ip_allow_list', 'almoner_environment'],
    },
    renderError: errorPageFor(environment),
    conformIdTokenClaims: true,
    clockTolerance: 0,
  };

  const provider = new Provider(options.issuer, configuration);
  provider.proxy = true; // forwarded headers are set by our own mount, from trusted values only

  // Redirect URIs match as PRODUCT.md section 3 says: scheme and host case-insensitive,
  // :443 equal to no port, path exact, never a pattern.
  provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(this: { redirectUris: string[] }, value: string) {
    return redirectUriMatches(value, this.redirectUris, environment);
  };
  // client_secret holds an argon2id hash; verified through a short-lived cache.
  provider.Client.prototype.compareClientSecret = async function compareClientSecret(this: { clientId: string; clientSecret: string }, presented: string) {
    // The caller address (ours, from trusted proxies only: see oidc/mount.ts) keys the failure limit.
    const source = (Provider as unknown as { ctx?: { ip?: string } }).ctx?.ip ?? '';
    if (await options.secretCache.verify(this.clientId, this.clientSecret, presented, source)) return true;
    // The registration may have been read before a rotation in another process: a secret that
    // fails is checked once more against the current one, so a new secret works at once.
    const current = await clients.reload(this.clientId);
    if (!current || current.client_secret === this.clientSecret) return false;
    return options.secretCache.verify(this.clientId, current.client_secret, presented, source);
  } as unknown as (presented: string) => boolean;
  return provider;
}

type PostgresAdapterFactory = (model: string) => PostgresAdapter;

/** How long a process reuses a client registration it read (PRODUCT.md: changes are live within 5 s). */
export const CLIENT_CACHE_MS = 1_000;
const CLIENT_CACHE_MAX = 10_000;

/**
 * The Client model, read from oauth_clients; registration is by admin only, so writes are
 * refused. A registration read is reused for CLIENT_CACHE_MS: every token, introspection and
 * revocation request reads its client, and a busy client would otherwise cost a query each.
 */
class ClientAdapter {
  private readonly cache = new Map<string, { metadata: ReturnType<typeof toClientMetadata>; readAt: number }>();

  constructor(
    private readonly db: Db,
    private readonly environment: Environment,
  ) {}

  async find(id: string) {
    // Anything but a well-formed client id is simply unknown (and never reaches Postgres,
    // which refuses NUL bytes in text with an error).
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
    const cached = this.cache.get(id);
    // Fresh from its read until CLIENT_CACHE_MS later on the wall clock (the one tests move): a
    // clock stepped back (NTP, a test) ends an entry instead of extending it.
    const age = cached ? Date.now() - cached.readAt : -1;
    if (cached && age >= 0 && age < CLIENT_CACHE_MS) return { ...cached.metadata };
    return this.reload(id);
  }

  /** Reads the registration from the database, bypassing (and refreshing) the cache. */
  async reload(id: string) {
    const row = await findClient(this.db, this.environment, id);
    if (!row) {
      this.cache.delete(id);
      return undefined;
    }
    const metadata = toClientMetadata(row, this.environment);
    if (this.cache.size >= CLIENT_CACHE_MAX) this.cache.clear();
    this.cache.set(id, { metadata, readAt: Date.now() });
    return { ...metadata };
  }

  async upsert(): Promise<never> {
    throw new Error('clients are registered through the clients file (clients_file), never by the provider');
  }

  async destroy(): Promise<never> {
    throw new Error('clients are registered through the clients file (clients_file), never by the provider');
  }
}

/**
 * Every requested scope must be one the client registered (unknown ones included, which the
 * library would otherwise drop silently), and an authorization holds at most one FDX scope.
 */
function validateRequestedScopes(ctx: KoaContextWithOIDC, value: string | undefined, client: { scope?: string; grantTypeAllowed?: (type: string) => boolean }) {
  const requested = (value ?? '').split(' ').filter(Boolean);
  const registered = new Set((client?.scope ?? '').split(' '));
  const outside = requested.filter((s) => !registered.has(s));
  if (outside.length > 0) throw new errors.InvalidScope('requested scope is not allowed', outside.join(' '));
  if (FDX_SCOPES.every((s) => requested.includes(s))) {
    throw new errors.InvalidScope('read:bank_accounts and sync:connected_accounts cannot be requested together', FDX_SCOPES.join(' '));
  }
  if (requested.includes('offline_access') && client.grantTypeAllowed?.('refresh_token')) keepOfflineAccess(ctx);
}

/**
 * The library drops a requested offline_access unless prompt=consent was asked for. Our
 * consent screen always lists it (OpenID Connect Core 11), and a covering authorization is
 * reused only when it already holds it (existing-grant.ts), so it is put back: the consent,
 * the Grant, the code and the token response's scope then carry it like any other scope.
 * This runs as the last authorization check (extraParams), before the interaction is saved.
 */
function keepOfflineAccess(ctx: KoaContextWithOIDC): void {
  const scopes = String(ctx.oidc.params?.scope ?? '').split(' ').filter(Boolean);
  if (!scopes.includes('offline_access')) ctx.oidc.params!.scope = [...scopes, 'offline_access'].join(' ');
}
