import type http from 'node:http';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AppConfig } from '../config/schema.js';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import { recordAudit } from '../audit/audit-log.js';
import { sweepExpired } from './adapter.js';
import { revokeAuthorization } from './authorizations.js';
import { recordGrantRefusal } from './grant-refusals.js';
import { ClientSecretCache } from './client-secret-cache.js';
import { ensureSigningKeys, ENVIRONMENTS, keysVersion, loadJwks } from './keys.js';
import { authorizationPath, createProvider } from './provider.js';
import type { SecretBox } from '../db/secret-box.js';
import { KEY_POLL_SECONDS, type ServerKeys } from '../keys/server-keys.js';
import { cookieKeygrip } from './cookie-keys.js';
import { authorizationRequest } from './middleware/authorization-request.js';
import { authenticationChallenge, basicClientAuthentication } from './middleware/challenge.js';
import { discoveryDocument } from './middleware/discovery.js';
import { databaseOutage } from './middleware/database-outage.js';
import { introspectionResponse } from './middleware/introspection-response.js';
import { catchOAuthErrors } from './middleware/oauth-errors.js';
import { refreshGrace, withinGrace } from './middleware/refresh-grace.js';
import { refreshScope } from './middleware/refresh-scope.js';
import { tokenRequest } from './middleware/token-request.js';
import { tokenResponse } from './middleware/token-response.js';
import { tokenUnit } from './middleware/token-endpoint-unit.js';
import { awaitResponseWork, finishBeforeResponse } from './middleware/response-work.js';
import { currentTokenUnit } from './token-unit.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

const KEY_POLL_MS = KEY_POLL_SECONDS * 1000;
const SWEEP_MS = 10 * 60_000;

/**
 * The two providers (production, sandbox), rebuilt when the signing keys rotate, plus the
 * background chores: noticing rotations and sweeping expired provider rows.
 */
export class OidcService {
  private readonly providers = new Map<Environment, { provider: Provider; handler: Handler }>();
  private keyVersion = '';
  private timers: NodeJS.Timeout[] = [];

  private constructor(
    private readonly db: Db,
    private readonly config: AppConfig,
    private readonly logger: Logger,
    private readonly serverKeys: ServerKeys,
    readonly secretCache: ClientSecretCache,
    private readonly box: SecretBox,
  ) {}

  static async create(db: Db, config: AppConfig, logger: Logger, box: SecretBox, serverKeys: ServerKeys): Promise<OidcService> {
    await ensureSigningKeys(db, box);
    const cacheKeys = () => serverKeys.verifying('client_secret_cache_key').map((version) => version.bytes);
    const service = new OidcService(db, config, logger, serverKeys, new ClientSecretCache(cacheKeys), box);
    await service.rebuild();
    return service;
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
    // A second use of a code or refresh token that loses the race to consume it is a replay:
    // it ends the authorization, as the library does for a replay it sees (a refresh
    // duplicate inside the grace window excepted).
    const onConflict = async (model: string, grantId: string | undefined, consumedAt: Date) => {
      if (!grantId) return;
      if (model === 'RefreshToken' && withinGrace(consumedAt, grace)) return;
      await revokeAuthorization(this.db, environment, grantId, model === 'RefreshToken' ? 'refresh_token_reuse' : 'authorization_code_replay');
      await recordAudit(this.db, { event: model === 'RefreshToken' ? 'refresh_token.reuse' : 'authorization_code.replay', environment, details: { grant_id: grantId } });
    };
    const provider = createProvider({
      environment,
      issuer,
      dashboardOrigin,
      db: this.db,
      jwks,
      cookieKeys: cookieKeygrip(this.serverKeys, environment),
      secretCache: this.secretCache,
      onConsumeConflict: onConflict,
      refreshGraceSeconds: grace,
    });

    provider.use(awaitResponseWork());
    provider.use(databaseOutage(provider));
    // Outside every middleware that answers 401, so each such answer gets its challenge.
    provider.use(authenticationChallenge(issuer));
    provider.use(catchOAuthErrors(basicClientAuthentication()));
    provider.use(catchOAuthErrors(authorizationRequest(provider, authorizationPath(environment))));
    // Refusals before the provider's token route are announced as its own are (logs, metrics).
    const tokenRefused = (ctx: unknown, error: unknown) => void provider.emit('grant.error', ctx, error);
    provider.use(catchOAuthErrors(tokenRequest(provider), tokenRefused));
    provider.use(catchOAuthErrors(refreshGrace(this.db, environment, grace), tokenRefused));
    provider.use(tokenResponse(this.db, environment));
    // Inside refreshGrace and tokenResponse: they see the answer to a lost consume race.
    provider.use(tokenUnit({ db: this.db, environment, onConsumeConflict: onConflict, refreshGraceSeconds: grace }));
    // Inside tokenUnit: its read of the refresh token is the one the provider reuses.
    provider.use(refreshScope(provider));
    provider.use(introspectionResponse(this.db, environment));
    provider.use(discoveryDocument(`${dashboardOrigin}${authorizationPath(environment)}`));

    const auditEntry = (ctx: KoaContextWithOIDC | undefined, event: string, details: Record<string, unknown>) => ({
      event,
      environment,
      clientId: ctx?.oidc?.client?.clientId ?? null,
      ip: ctx?.ip ?? null,
      requestId: String(ctx?.res?.getHeader('x-request-id') ?? '') || null,
      details,
    });
    const audit = (ctx: KoaContextWithOIDC | undefined, event: string, details: Record<string, unknown>) => {
      const entry = auditEntry(ctx, event, details);
      // At the token endpoint the event commits with the tokens it records (token-unit.ts).
      const unit = currentTokenUnit();
      if (unit && event === 'token.issued') {
        unit.audits.push(entry);
        return;
      }
      finishBeforeResponse(ctx, recordAudit(this.db, entry).catch((error: Error) => this.logger.error({ err: error }, 'audit write failed')));
    };
    provider.on('grant.success', (ctx: KoaContextWithOIDC) => audit(ctx, 'token.issued', { grant_type: ctx.oidc.params?.grant_type }));
    provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
      // The library does not await its listeners; the answer waits for this instead, so a
      // client told "revoked" never finds the authorization still live.
      const work = (async () => {
        const revoked = await revokeAuthorization(this.db, environment, grantId, ctx.oidc?.route === 'revocation' ? 'token_revoked' : 'replay_detected');
        if (revoked) await recordAudit(this.db, auditEntry(ctx, ctx.oidc?.route === 'revocation' ? 'authorization.revoked' : 'refresh_token.reuse', { grant_id: grantId }));
      })().catch((error: Error) => this.logger.error({ err: error }, 'grant revocation bookkeeping failed'));
      finishBeforeResponse(ctx, work);
    });
    provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error?: string; error_detail?: string }) => {
      // Heard before the answer leaves: tokenResponse turns it into the error_description.
      recordGrantRefusal(ctx, error);
      this.logger.info({ req_id: ctx?.res?.getHeader('x-request-id'), error: error.error, detail: error.error_detail }, 'token request refused');
    });
    provider.on('server_error', (_ctx: unknown, error: Error) => this.logger.error({ err: error }, 'oidc provider error'));
    return provider;
  }

  /**
   * Starts the key watcher and the sweeper. The watcher picks up signing-key rotations
   * (rebuilding the providers) and server-key rotations (cookie, CSRF, cache and hashing
   * keys, read at each use) within KEY_POLL_SECONDS.
   */
  start(): void {
    const keyTimer = setInterval(() => {
      void keysVersion(this.db)
        .then(async (version) => {
          if (version !== this.keyVersion) {
            await this.rebuild();
            this.logger.info('signing keys changed; providers rebuilt');
          }
        })
        .catch((error: Error) => this.logger.warn({ err: error }, 'key check failed'));
      void this.serverKeys
        .refresh()
        .then((changed) => changed && this.logger.info('server keys changed; new versions loaded'))
        .catch((error: Error) => this.logger.warn({ err: error }, 'server key check failed'));
    }, KEY_POLL_MS);
    const sweepTimer = setInterval(() => {
      void Promise.all([sweepExpired(this.db), this.db.deleteFrom('oidc_refresh_successors').where('expires_at', '<', new Date()).execute()])
        .then(([deleted]) => deleted > 0 && this.logger.info({ deleted }, 'expired provider rows swept'))
        .catch((error: Error) => this.logger.warn({ err: error }, 'sweep failed'));
    }, SWEEP_MS);
    keyTimer.unref();
    sweepTimer.unref();
    this.timers = [keyTimer, sweepTimer];
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }
}

