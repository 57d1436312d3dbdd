import path from 'node:path';
import type Koa from 'koa';
import { buildApp } from './app.js';
import type { AppConfig } from './config/schema.js';
import type { Db } from './db/database.js';
import type { Logger } from './logging/logger.js';
import { ClientRegistrySync } from './oidc/clients/registry-sync.js';
import { ProviderLifecycle } from './oidc/stack/provider-lifecycle.js';
import { createMailSender } from './mail/sender.js';
import { BackgroundWork } from './http/background-work.js';
import { loadSecretBox } from './keys/secret-box.js';
import { ServerKeys } from './keys/server-keys.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { AddressSet } from './http/client-address.js';
import { buildMetricsApp } from './metrics/endpoint.js';
import { Metrics } from './metrics/metrics.js';
import { MailBatchIngestor } from './gift-processing/mail-batch-ingestor.js';
import { createObjectStorage } from './storage/create-storage.js';
import type { ObjectStorage } from './storage/object-storage.js';
import { UploadSigner } from './storage/upload-signing.js';

export interface Runtime {
  app: Koa;
  /** Prometheus metrics of this runtime (its own registry). */
  metrics: Metrics;
  /** The admin listener's app (/metrics, /healthz, /readyz) when metrics_listen is set. */
  metricsApp: Koa | undefined;
  oidc: ProviderLifecycle;
  /** The server keys of this process (cookie, CSRF, cache and hashing keys), refreshed by the key watcher. */
  keys: ServerKeys;
  clients: ClientRegistrySync;
  /**
   * The object storage of this process (mail batches, scans; docs/gift-processing.md, "Object
   * storage"): the app's, and the one background jobs (mail batch ingestion) use.
   */
  storage: ObjectStorage;
  /** Work requests left to run after their response (password-reset requests, notice mail); stop() waits for it. */
  background: BackgroundWork;
  /** Background chores: clients-file polling, key-rotation watch, sweeping. */
  start(): void;
  /**
   * Stops the chores. Webhook attempts in flight get up to `graceMs` to finish, then are
   * aborted and given back for a later attempt (0, the default, aborts them at once).
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Everything the HTTP app needs beyond config and database: the client registry (synced
 * from the clients file; an invalid file stops here), the providers and their secrets.
 */
export interface RuntimeOptions {
  /** A worker of a cluster primary (workers > 1): /metrics answers for every worker (Metrics.joinCluster). */
  clusterWorker?: boolean;
  /**
   * How many records the client-secret check keeps of each kind (ClientSecretCache; default
   * 10,000): a test floods past a smaller number rather than ten thousand requests.
   */
  clientSecretRecords?: number;
}

export async function createRuntime(config: AppConfig, db: Db, logger: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const clients = new ClientRegistrySync(db, path.resolve(config.clients_file), logger, config.profile);
  await clients.syncNow();
  const box = loadSecretBox(config);
  const keys = await ServerKeys.load(db, box);
  const oidc = await ProviderLifecycle.create(db, config, logger, box, keys, { secretRecords: options.clientSecretRecords });
  const mail = createMailSender(config, db, logger);
  const metrics = new Metrics({ db, oidc });
  if (options.clusterWorker) metrics.joinCluster();
  const background = new BackgroundWork(logger);
  const readinessWarnings = () => clients.warnings();
  // One storage for the app (uploads, scans) and the mail batch ingestor (docs/gift-processing.md, "Ingestion").
  const storage = createObjectStorage(config, new UploadSigner(keys, { production: config.base_url, sandbox: config.sandbox_base_url }));
  const app = buildApp({ config, db, logger, oidc, serverKeys: keys, mail, box, metrics, background, readinessWarnings, storage });
  const metricsApp = config.metrics_listen
    ? buildMetricsApp({ metrics, db, logger, allow: new AddressSet(config.metrics_allow), readinessWarnings })
    : undefined;
  const webhooks = new WebhookDispatcher({
    db,
    logger,
    box,
    retrySeconds: config.webhook_retry_seconds,
    timeoutMs: config.webhook_timeout_ms,
    profile: config.profile,
    perOrganization: config.webhook_in_flight_per_organization,
    perSubscription: config.webhook_in_flight_per_subscription,
    pauseAfterFailures: config.webhook_pause_after_failures,
    onOutcome: (outcome) => metrics.webhookAttempts.inc({ outcome }),
  });
  const mailBatches = new MailBatchIngestor({ db, logger, storage, maxBatchBytes: config.mail_batch_max_bytes });
  let started = false;
  return {
    app,
    metrics,
    metricsApp,
    oidc,
    keys,
    clients,
    background,
    storage,
    start() {
      if (started) return;
      started = true;
      clients.start(config.clients_poll_seconds);
      oidc.start();
      webhooks.start(config.webhook_poll_ms);
      mailBatches.start();
    },
    async stop(graceMs = 0) {
      oidc.stop();
      await Promise.all([clients.stop(), webhooks.stop(graceMs), mailBatches.stop(), background.drain()]);
    },
  };
}
