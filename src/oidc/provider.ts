import Provider, { type Configuration } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { PostgresAdapter, type ConsumeConflictHandler } from './adapter.js';
import { makeFindAccount } from './account.js';
import type { Keygrip } from './cookie-keys.js';
import { ClientAdapter } from './client-adapter.js';
import { providerErrorPage } from '../http/error-handler.js';
import { errorPageLayout } from '../views/page.js';
import { makeLoadExistingGrant } from './existing-grant.js';
import { providerConfiguration } from './configuration.js';
import { keySetFetch, type KeySetFetch } from './key-set-fetch.js';
import { endSessionPages } from './end-session-pages.js';
import {
  overrideCompareClientSecret,
  overridePostLogoutRedirectUriAllowed,
  overrideRedirectUriAllowed,
  overrideRefreshTokenBinding,
  overrideReplayDetection,
} from './provider-internals.js';

/**
 * Builds one environment's oidc-provider instance: the configuration (configuration.ts) with
 * our storage (adapter.ts, client-adapter.ts), accounts and error page plugged in, and the
 * library overrides (provider-internals.ts) installed. The middleware around it is
 * stack/provider-stack.ts; the lifecycle, stack/provider-lifecycle.ts.
 */

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
  /**
   * The client registrations the provider reads; the stack's client-secret check reads the same
   * ones (middleware/client-secret-check.ts). Its own when not given.
   */
  clients?: ClientAdapter;
  onConsumeConflict?: ConsumeConflictHandler;
  refreshGraceSeconds?: number;
  /** How clients' JWK Sets are fetched from their jwks_uri (key-set-fetch.ts); the production rules when not given. */
  fetchKeySet?: KeySetFetch;
}

export function createProvider(options: ProviderOptions): Provider {
  const { environment, db } = options;
  const clients = options.clients ?? new ClientAdapter(db, environment);
  const adapterOptions = {
    db,
    environment,
    onConsumeConflict: options.onConsumeConflict,
    refreshGraceSeconds: options.refreshGraceSeconds,
  };
  const configuration = providerConfiguration({
    environment,
    dashboardOrigin: options.dashboardOrigin,
    jwks: options.jwks,
    cookieKeys: options.cookieKeys,
    adapter: function AdapterFactory(model: string) {
      if (model === 'Client') return clients;
      return new PostgresAdapter(model, adapterOptions);
    } as unknown as Configuration['adapter'],
    findAccount: makeFindAccount(db, environment) as unknown as Configuration['findAccount'],
    loadExistingGrant: makeLoadExistingGrant(db, environment),
    renderError: providerErrorPage(errorPageLayout(environment)),
    logoutPages: endSessionPages(environment),
    fetch: options.fetchKeySet ?? keySetFetch({ profile: 'production' }),
  });

  const provider = new Provider(options.issuer, configuration);
  provider.proxy = true; // forwarded headers are set by our own mount, from trusted values only
  overrideRedirectUriAllowed(provider, environment);
  overridePostLogoutRedirectUriAllowed(provider, environment);
  overrideCompareClientSecret(provider);
  overrideReplayDetection(provider, db, environment);
  overrideRefreshTokenBinding(provider);
  return provider;
}
