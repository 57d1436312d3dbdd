import type http from 'node:http';
import type { AppConfig } from '../config/schema.js';
import { createRuntime } from '../runtime.js';
import { createDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import { resolveDatabase, type DatabaseLocation } from '../db/resolve.js';
import { seedContext, seedDemoData } from '../demo/seed.js';
import type { Logger } from '../logging/logger.js';
import { closeServers, listen, listenAddresses, parseListenAddress, readTls, type ListenAddress } from './listeners.js';

export interface RunningServer {
  config: AppConfig;
  db: Db;
  database: DatabaseLocation;
  listening: ListenAddress[];
  /** The admin listener serving /metrics (metrics_listen), when configured. */
  metricsListening: ListenAddress | undefined;
  seeded: string[];
  close(): Promise<void>;
}

/** load config → open db → migrate → seed (dev) → build app → listen. */
export async function startServer(config: AppConfig, logger: Logger): Promise<RunningServer> {
  const tls = readTls(config);
  const database = await resolveDatabase(config, 'always', (message) => logger.info(message));
  const db = createDatabase({
    url: database.url,
    poolMax: config.database_pool_max,
    statementTimeoutMs: config.database_statement_timeout_ms,
    onPoolError: (error) => logger.warn({ err: { message: error.message } }, 'idle database connection lost'),
  });
  const servers: http.Server[] = [];
  let stopRuntime: (graceMs?: number) => Promise<void> = async () => undefined;
  try {
    const { applied } = await migrateToLatest(db);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    const seeded = config.demo_data ? await seedDemoData(db, seedContext(config)) : [];
    if (seeded.length > 0) logger.info({ steps: seeded }, 'demo data seeded');

    if (config.profile === 'production' && !config.secrets_key) {
      logger.warn('ALMONER_SECRETS_KEY is not set: secrets are sealed with a key file in the data directory; processes sharing a database must share that key');
    }
    const runtime = await createRuntime(config, db, logger);
    runtime.start();
    stopRuntime = (graceMs) => runtime.stop(graceMs);
    const handler = runtime.app.callback();
    const addresses = listenAddresses(config);
    for (const address of addresses) servers.push(await listen(address, handler, tls));
    const boundTo = (server: http.Server) => {
      const info = server.address() as { address: string; port: number };
      return { host: info.address, port: info.port };
    };
    const listening = servers.map(boundTo);
    let metricsListening: ListenAddress | undefined;
    if (runtime.metricsApp && config.metrics_listen) {
      // Plain HTTP on purpose: bind it to loopback or a private interface (see README, Metrics).
      const server = await listen(parseListenAddress(config.metrics_listen), runtime.metricsApp.callback(), undefined);
      servers.push(server);
      metricsListening = boundTo(server);
    }

    let closing: Promise<void> | undefined;
    return {
      config,
      db,
      database,
      listening,
      metricsListening,
      seeded,
      close() {
        closing ??= (async () => {
          // One grace for everything in flight, HTTP requests and webhook attempts alike, so
          // shutdown is bounded by shutdown_grace_seconds whatever clients or receivers do.
          await Promise.all([closeServers(servers, config.shutdown_grace_seconds), stopRuntime(config.shutdown_grace_seconds * 1000)]);
          await db.destroy();
          await database.release();
        })();
        return closing;
      },
    };
  } catch (error) {
    await closeServers(servers, 0);
    await stopRuntime().catch(() => undefined);
    await db.destroy().catch(() => undefined);
    await database.release().catch(() => undefined);
    throw error;
  }
}
