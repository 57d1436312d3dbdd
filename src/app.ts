import Koa from 'koa';
import type { AppConfig } from './config/schema.js';
import type { Db } from './db/database.js';
import type { Logger } from './logging/logger.js';
import { buildApiApp } from './apps/api-app.js';
import { buildGateway } from './gateway/index.js';
import { buildDashboardApp } from './apps/dashboard-app.js';
import { requestFrame } from './apps/request-frame.js';
import { AddressSet, callerInside } from './http/client-address.js';
import { healthEndpoints, isLoopback, type ReadinessWarning } from './http/health.js';
import { hostDispatch } from './http/host-dispatch.js';
import { HostTable, hostTargets, isLoopbackAuthority, withDevAliases } from './http/hosts.js';
import { httpsRequired } from './http/https-required.js';
import type { Middleware } from 'koa';
import type { ProviderLifecycle } from './oidc/stack/provider-lifecycle.js';
import { TableMailSender, type MailSender } from './mail/sender.js';
import { BackgroundWork } from './http/background-work.js';
import { metricsEndpoint } from './metrics/endpoint.js';
import { Metrics } from './metrics/metrics.js';
import type { SecretBox } from './keys/secret-box.js';
import type { ServerKeys } from './keys/server-keys.js';
import { errorPageLayout } from './views/page.js';
import { useViewProfile } from './views/render.js';
import { createObjectStorage } from './storage/create-storage.js';
import { UploadSigner } from './storage/upload-signing.js';
import type { ObjectStorage } from './storage/object-storage.js';
import './http/state.js';

export interface AppDeps {
  config: AppConfig;
  db: Db;
  logger: Logger;
  oidc: ProviderLifecycle;
  /** Outgoing mail (SMTP in production, the dev mail table otherwise); defaults to the table. */
  mail?: MailSender;
  /** Encryption at rest for secrets written by requests (webhook signing secrets). */
  box: SecretBox;
  /** The rotating server keys: CSRF tokens, keyed hashes (throttle, audit, DAF codes). */
  serverKeys: ServerKeys;
  /** The runtime's Prometheus metrics; a fresh set when omitted. */
  metrics?: Metrics;
  /** Work started by requests that runs after their response (password-reset requests); a fresh one when omitted. */
  background?: BackgroundWork;
  /** What /readyz lists beside "ready" (the clients file's standing); none when omitted. */
  readinessWarnings?: () => readonly ReadinessWarning[];
  /** Object storage (mail batches, scans); when omitted, the configured one (createObjectStorage). */
  storage?: ObjectStorage;
}

/**
 * Builds the one Koa app that serves all four hosts. It never listens: main.ts does, and
 * tests drive `app.callback()` through supertest.
 */
export function buildApp({
  config,
  db,
  logger,
  oidc,
  serverKeys,
  mail,
  box,
  metrics = new Metrics({ db, oidc }),
  background = new BackgroundWork(logger),
  readinessWarnings,
  storage = createObjectStorage(config, new UploadSigner(serverKeys, { production: config.base_url, sandbox: config.sandbox_base_url })),
}: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false; // forwarded headers are judged by resolveClientAddress, against trusted_proxies only
  app.silent = true; // errors are logged by the error handler (in requestFrame), with the request id
  useViewProfile(config.profile);

  const hosts = new HostTable(withDevAliases(config, hostTargets(config)));
  // A warning's detail names paths and hosts: for the callers that may read /metrics.
  const operators = new AddressSet(config.metrics_allow);
  const health = healthEndpoints(db, { warnings: readinessWarnings, showDetail: (ctx) => callerInside(operators, ctx.state) });

  const trustedProxies = new AddressSet(config.trusted_proxies);
  // Request id, caller address, metrics, access log, error answers and security headers.
  app.use(requestFrame(logger, trustedProxies, metrics));
  if (config.profile === 'production') app.use(httpsRequired());
  // Health probes answer on the four hosts, and on a loopback authority from a loopback peer
  // (an operator's or orchestrator's local check that knows no public host name).
  app.use(async (ctx, next) => {
    const localProbe = isLoopback(ctx.req.socket.remoteAddress ?? '') && isLoopbackAuthority(ctx.get('host'));
    if (localProbe || hosts.lookup(ctx.get('host'))) return health(ctx, next);
    return next();
  });
  // GET /metrics on the two API hosts, unless metrics_listen gives it a listener of its own.
  if (!config.metrics_listen)
    app.use(metricsEndpoint(metrics, new AddressSet(config.metrics_allow), (ctx) => hosts.lookup(ctx.get('host'))?.surface === 'api'));
  // One sender for every e-mail of this process: the gateway's (DAF codes) and the dashboards'.
  const sender = mail ?? new TableMailSender(db, logger);
  // One app per origin served: the four configured, and a dev alias's dashboard beside its own.
  const apps: Record<string, Middleware> = {};
  for (const target of hosts.targets) {
    apps[target.origin] =
      target.surface === 'api'
        ? buildApiApp(
            target,
            oidc,
            buildGateway({
              db,
              origin: target.origin,
              ipRestrictedAreas: config.ip_restricted_areas,
              services: {
                mail: sender,
                profile: config.profile,
                box,
                keys: serverKeys,
                maxDisbursementCents: config.max_disbursement_cents,
                storage,
                mailBatchMaxBytes: config.mail_batch_max_bytes,
              },
            }),
          )
        : buildDashboardApp(target, { db, oidc, serverKeys, config, mail: sender, box, background, storage });
  }
  // A browser at an address we do not serve gets a page naming ours (no environment's).
  app.use(hostDispatch(hosts, apps, errorPageLayout('production')));
  return app;
}
