import type http from 'node:http';
import type Provider from 'oidc-provider';
import type { AppConfig } from '../../config/schema.js';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import type { Logger } from '../../logging/logger.js';
import type { SecretBox } from '../../keys/secret-box.js';
import type { ServerKeys } from '../../keys/server-keys.js';
import { ClientSecretCache } from '../client-secret-cache.js';
import { ClientAdapter } from '../client-adapter.js';
import { ensureSigningKeys, ENVIRONMENTS, keysVersion, loadJwks } from '../keys.js';
import { createProvider } from '../provider.js';
import { cookieKeygrip } from '../cookie-keys.js';
import { revokeOnReplay } from '../replay-revocation.js';
import { stackMiddleware } from './provider-stack.js';
import { listenToProvider } from '../audit-listeners.js';
import { startChores } from '../chores.js';
import { keySetFetch, type KeySetFetch } from '../key-set-fetch.js';
import { redactUrl } from '../../logging/redaction.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

/**
 * The two providers (production, sandbox) and their lifecycle: built at start, rebuilt when
 * the signing keys rotate, each with its middleware (provider-stack.ts) and event listeners
 * (audit-listeners.ts), plus the background chores (chores.ts).
 */
export class ProviderLifecycle {
  private readonly providers = new Map<Environment, { provider: Provider; handler: Handler }>();
  private keyVersion = '';
  private stopChores: (() => void) | undefined;
  /** One for both providers and every rebuild, so a failed jwks_uri stays remembered. */
  private readonly fetchKeySet: KeySetFetch;

  private constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly logger: Logger,
    private readonly serverKeys: ServerKeys,
    readonly secretCache: ClientSecretCache,
    private readonly box: SecretBox,
  ) {
    this.fetchKeySet = keySetFetch({
      profile: config.profile,
      onFailure: (url, reason) => logger.warn({ jwks_uri: redactUrl(url), reason }, "a client's JWK Set could not be fetched"),
    });
  }

  static async create(
    db: Db,
    config: AppConfig,
    logger: Logger,
    box: SecretBox,
    serverKeys: ServerKeys,
    options: { secretRecords?: number } = {},
  ): Promise<ProviderLifecycle> {
    await ensureSigningKeys(db, box);
    const cacheKeys = () => serverKeys.verifying('client_secret_cache_key').map((version) => version.key);
    const secretCache = new ClientSecretCache(cacheKeys, undefined, options.secretRecords);
    const lifecycle = new ProviderLifecycle(db, config, logger, serverKeys, secretCache, box);
    await lifecycle.rebuild();
    return lifecycle;
  }

  provider(environment: Environment): Provider {
    return this.providers.get(environment)!.provider;
  }

  handler(environment: Environment): Handler {
    return this.providers.get(environment)!.handler;
  }

  /** Builds both providers from the current keys. */
  async rebuild(): Promise<void> {
    this.keyVersion = await keysVersion(this.db);
    for (const environment of ENVIRONMENTS) {
      const provider = this.build(environment, await loadJwks(this.db, this.box, environment));
      this.providers.set(environment, { provider, handler: provider.callback() as unknown as Handler });
    }
  }

  private build(environment: Environment, jwks: { keys: Record<string, unknown>[] }): Provider {
    const issuer = environment === 'production' ? this.config.base_url : this.config.sandbox_base_url;
    const dashboardOrigin = environment === 'production' ? this.config.dashboard_url : this.config.sandbox_dashboard_url;
    const grace = this.config.refresh_reuse_grace_seconds;
    const onConflict = revokeOnReplay(this.db, environment, grace);
    const clients = new ClientAdapter(this.db, environment);
    const provider = createProvider({
      environment,
      issuer,
      dashboardOrigin,
      db: this.db,
      jwks,
      cookieKeys: cookieKeygrip(this.serverKeys, environment),
      clients,
      onConsumeConflict: onConflict,
      refreshGraceSeconds: grace,
      fetchKeySet: this.fetchKeySet,
    });
    stackMiddleware(provider, {
      db: this.db,
      environment,
      issuer,
      dashboardOrigin,
      refreshGraceSeconds: grace,
      onConsumeConflict: onConflict,
      clientSecrets: { cache: this.secretCache, clients },
    });
    listenToProvider(provider, { db: this.db, environment, logger: this.logger });
    return provider;
  }

  /** Starts the key watcher and the sweeper (chores.ts). */
  start(): void {
    this.stopChores = startChores({
      db: this.db,
      logger: this.logger,
      serverKeys: this.serverKeys,
      keyVersion: () => this.keyVersion,
      rebuild: () => this.rebuild(),
    });
  }

  stop(): void {
    this.stopChores?.();
  }
}
