import type http from 'node:http';
import type { AppConfig } from '../config/schema.js';
import { createRuntime } from '../runtime.js';
import { createDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import { resolveDatabase, type DatabaseLocation } from '../db/resolve.js';
import { seedContext, seedDemoData } from '../demo/seed.js';
import type { Logger } from '../logging/logger.js';
import { bindEphemeralUrls, startingUp } from './ephemeral-urls.js';
import { closeServers, listen, listenAddresses, parseListenAddress, readTls, type ListenAddress } from './listeners.js';
import { checkPortsFree } from './port-check.js';
import { removeReadyFile, writeReadyFile } from './ready-file.js';

export interface RunningServer {
  /** The configuration served: a port-0 URL names the port bound for it. */
  config: AppConfig;
  db: Db;
  database: DatabaseLocation;
  listening: ListenAddress[];
  /** The admin listener serving /metrics (metrics_listen), when configured. */
  metricsListening: ListenAddress | undefined;
  seeded: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  /**
   * `single` (the default): the whole server in this process. `worker`: one of the processes a
   * cluster primary forked (workers > 1; src/server/workers.ts): the primary has resolved the
   * database (its URL is this process's database_url), migrated and seeded it, and writes the
   * ready file, so a worker only opens its pool, builds the app and listens on the shared handles.
   */
  role?: 'single' | 'worker';
  /**
   * Aborted by SIGINT or SIGTERM during the start (src/server/stop-on-signals.ts): the start
   * stops at its next step, undoes what it did (listeners, runtime, pool, the embedded
   * PostgreSQL it started, a half-made cluster) and rejects. A step under way finishes first:
   * initdb excepted (it is stopped), each is short, and migrations run in one transaction.
   */
  signal?: AbortSignal;
}

/** load config → check every port → bind port-0 URLs → open db → migrate → seed (dev) → build app → listen. */
export async function startServer(loaded: AppConfig, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  const worker = options.role === 'worker';
  const { signal } = options;
  if (worker && !loaded.database_url) throw new Error('a cluster worker needs the database URL from its primary (database_url)');
  const tls = readTls(loaded);
  // Every port first, all named at once: nothing is started for a start that cannot listen.
  // A worker listens on its primary's handles, which the primary checked.
  if (!worker) await checkPortsFree(loaded);
  // Port-0 URLs are bound before anything reads the configuration, which then names the bound ports.
  const ephemeral = await bindEphemeralUrls(loaded, tls);
  const config = ephemeral.config;
  const servers: http.Server[] = [...ephemeral.servers];
  let database: DatabaseLocation | undefined;
  let db: Db | undefined;
  let stopRuntime: (graceMs?: number) => Promise<void> = async () => undefined;
  try {
    database = await resolveDatabase(config, 'always', (message) => logger.info(message), signal);
    signal?.throwIfAborted();
    db = createDatabase({
      url: database.url,
      poolMax: config.database_pool_max,
      statementTimeoutMs: config.database_statement_timeout_ms,
      onPoolError: (error) => logger.warn({ err: error }, 'idle database connection lost'),
    });
    const seeded = worker ? [] : await prepareDatabase(config, db, logger);
    signal?.throwIfAborted();
    const runtime = await createRuntime(config, db, logger, { clusterWorker: worker });
    stopRuntime = (graceMs) => runtime.stop(graceMs);
    signal?.throwIfAborted();
    runtime.start();
    const handler = runtime.app.callback();
    ephemeral.attach(handler);
    const addresses = listenAddresses(config).filter((address) => !ephemeral.ports.has(address.port));
    for (const address of addresses) {
      signal?.throwIfAborted();
      servers.push(await listen(address, handler, tls));
    }
    const boundTo = (server: http.Server) => {
      const info = server.address() as { address: string; port: number };
      return { host: info.address, port: info.port };
    };
    const listening = servers.map(boundTo);
    let metricsListening: ListenAddress | undefined;
    if (runtime.metricsApp && config.metrics_listen) {
      // Plain HTTP on purpose: bind it to loopback or a private interface (docs/operations.md, "Metrics").
      const server = await listen(parseListenAddress(config.metrics_listen, 'metrics_listen'), runtime.metricsApp.callback(), undefined);
      servers.push(server);
      metricsListening = boundTo(server);
    }
    // Past this point the caller has the server, and its close() undoes the start.
    signal?.throwIfAborted();
    const readyFile = worker ? undefined : config.ready_file;
    if (readyFile) {
      const urls = {
        base_url: config.base_url,
        sandbox_base_url: config.sandbox_base_url,
        dashboard_url: config.dashboard_url,
        sandbox_dashboard_url: config.sandbox_dashboard_url,
      };
      writeReadyFile(readyFile, {
        pid: process.pid,
        profile: config.profile,
        urls,
        listening,
        metrics_listening: metricsListening ?? null,
      });
    }

    const openDb = db;
    const openDatabase = database;
    let closing: Promise<void> | undefined;
    return {
      config,
      db: openDb,
      database: openDatabase,
      listening,
      metricsListening,
      seeded,
      close() {
        closing ??= (async () => {
          if (readyFile) removeReadyFile(readyFile);
          // One grace for everything in flight, HTTP requests and webhook attempts alike, so
          // shutdown is bounded by shutdown_grace_seconds whatever clients or receivers do.
          await Promise.all([closeServers(servers, config.shutdown_grace_seconds), stopRuntime(config.shutdown_grace_seconds * 1000)]);
          await openDb.destroy();
          await openDatabase.release();
        })();
        return closing;
      },
    };
  } catch (error) {
    // Requests held while starting hear "try again" rather than a reset connection.
    ephemeral.attach(startingUp);
    await closeServers(servers, 0);
    await stopRuntime().catch(() => undefined);
    await db?.destroy().catch(() => undefined);
    await database?.release().catch(() => undefined);
    throw error;
  }
}

/**
 * What happens once per database and start, whatever the number of processes: migrations,
 * the demo seed (dev) and the secrets-key warning. Returns the seed steps that ran.
 */
export async function prepareDatabase(config: AppConfig, db: Db, logger: Logger): Promise<string[]> {
  const { applied } = await migrateToLatest(db);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  const seeded = config.demo_data ? await seedDemoData(db, seedContext(config)) : [];
  if (seeded.length > 0) logger.info({ steps: seeded }, 'demo data seeded');

  if (config.profile === 'production' && !config.secrets_key) {
    logger.warn(
      'ALMONER_SECRETS_KEY is not set: secrets are sealed with a key file in the data directory; processes sharing a database must share that key',
    );
  }
  return seeded;
}
