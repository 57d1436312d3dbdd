import type http from 'node:http';
import type { AppConfig } from '../config/schema.js';
import { createRuntime } from '../runtime.js';
import { createDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import { resolveDatabase, type DatabaseLocation } from '../db/resolve.js';
import { seedContext, seedDemoData } from '../demo/seed.js';
import type { Logger } from '../logging/logger.js';
import { closeServers, listen, listenAddresses, readTls, type ListenAddress } from './listeners.js';

export interface RunningServer {
  config: AppConfig;
  db: Db;
  database: DatabaseLocation;
  listening: ListenAddress[];
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
  let stopRuntime = async () => undefined as void;
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
    stopRuntime = () => runtime.stop();
    const handler = runtime.app.callback();
    const addresses = listenAddresses(config);
    for (const address of addresses) servers.push(await listen(address, handler, tls));
    const listening = servers.map((server) => {
      const info = server.address() as { address: string; port: number };
      return { host: info.address, port: info.port };
    });

    let closing: Promise<void> | undefined;
    return {
      config,
      db,
      database,
      listening,
      seeded,
      close() {
        closing ??= (async () => {
          await closeServers(servers, config.shutdown_grace_seconds);
          await stopRuntime();
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
