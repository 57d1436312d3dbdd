import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { CLUSTER_WORKER_ENV } from '../config/load.js';
import { PUBLIC_URL_KEYS, type AppConfig } from '../config/schema.js';
import { createDatabase } from '../db/database.js';
import { resolveDatabase, type DatabaseLocation } from '../db/resolve.js';
import { loadSecretBox } from '../keys/secret-box.js';
import type { Logger } from '../logging/logger.js';
import { serveClusterScrapes } from '../metrics/cluster.js';
import { ClientRegistrySync } from '../oidc/clients/registry-sync.js';
import type { ListenAddress } from './listeners.js';
import { checkPortsFree } from './port-check.js';
import { removeReadyFile, writeReadyFile } from './ready-file.js';
import { prepareDatabase, startServer } from './start.js';
import { stopOnSignals } from './stop-on-signals.js';

/**
 * workers > 1 (ALMONER_WORKERS): one primary process and N workers that share the listeners
 * through node:cluster (the primary accepts, the workers serve, round robin).
 *
 * The primary does what must happen once: it resolves the database (starting the embedded
 * PostgreSQL when there is no database_url), migrates, seeds the demo data, creates the
 * secrets key file and checks the clients file; then it forks the workers with the database
 * URL in their environment and, once every one is serving, writes the ready file (the banner
 * is main.ts's). It serves no request itself. A worker that dies is logged and replaced after
 * a backoff that grows while workers keep dying. SIGTERM or SIGINT stops every worker as the
 * single process stops (in-flight requests finish within shutdown_grace_seconds), then the
 * primary releases the database.
 */

const READY = 'almoner:worker-ready';

/** What a worker tells the primary once it serves: the URLs as served (a port-0 URL with its port). */
interface WorkerReady {
  type: typeof READY;
  urls: Pick<AppConfig, (typeof PUBLIC_URL_KEYS)[number]>;
  listening: ListenAddress[];
  metricsListening: ListenAddress | null;
}

function isReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === READY;
}

/** The first replacement of a dead worker waits this long; each further death within CRASH_WINDOW_MS doubles it. */
export const RESTART_BACKOFF_MS = 500;
export const MAX_RESTART_BACKOFF_MS = 30_000;
const CRASH_WINDOW_MS = 60_000;

/** How long a dead worker's replacement waits, given how many workers died within the last minute (this one included). */
export function restartDelay(recentDeaths: number): number {
  return Math.min(MAX_RESTART_BACKOFF_MS, RESTART_BACKOFF_MS * 2 ** Math.max(0, recentDeaths - 1));
}

/** Past the grace period, a worker still running gets this much longer before it is killed. */
const STOP_MARGIN_MS = 5_000;

/** A started primary (workers > 1): what main.ts needs of a server, plus the live workers' pids. */
export interface PrimaryServer {
  /** The configuration served, with the URLs the workers bound (port 0 resolved). */
  config: AppConfig;
  database: DatabaseLocation;
  listening: ListenAddress[];
  metricsListening: ListenAddress | undefined;
  /** Pids of the live workers. */
  workerPids(): number[];
  close(): Promise<void>;
}

/** `signal`: see StartOptions.signal (start.ts); forking the workers is the last step it can interrupt. */
export async function startPrimary(config: AppConfig, logger: Logger, signal?: AbortSignal): Promise<PrimaryServer> {
  const count = config.workers;
  // Every port first, all named at once, before the database is started (as a single process does).
  await checkPortsFree(config);
  const database = await resolveDatabase(config, 'always', (message) => logger.info(message), signal);
  let pool: WorkerPool | undefined;
  try {
    const db = createDatabase({
      url: database.url,
      poolMax: 2,
      statementTimeoutMs: config.database_statement_timeout_ms,
      onPoolError: (error) => logger.warn({ err: error }, 'idle database connection lost'),
    });
    try {
      await prepareDatabase(config, db, logger);
      // Created here once, not raced for by N workers at their first start.
      loadSecretBox(config);
      // A bad clients file stops the start here, once, as it stops a single process.
      await new ClientRegistrySync(db, path.resolve(config.clients_file), logger).syncNow();
    } finally {
      await db.destroy();
    }
    signal?.throwIfAborted();

    serveClusterScrapes();
    pool = new WorkerPool(
      count,
      { DATABASE_URL: database.url, [CLUSTER_WORKER_ENV]: '1' },
      logger,
      config.shutdown_grace_seconds * 1000 + STOP_MARGIN_MS,
    );
    const first = await pool.start();
    const served: AppConfig = Object.freeze({ ...config, ...first.urls });
    const metricsListening = first.metricsListening ?? undefined;
    const readyFile = config.ready_file;
    if (readyFile) {
      writeReadyFile(readyFile, {
        pid: process.pid,
        profile: config.profile,
        urls: first.urls,
        listening: first.listening,
        metrics_listening: first.metricsListening,
      });
    }
    const workers = pool;
    let closing: Promise<void> | undefined;
    return {
      config: served,
      database,
      listening: first.listening,
      metricsListening,
      workerPids: () => workers.pids(),
      close() {
        closing ??= (async () => {
          if (readyFile) removeReadyFile(readyFile);
          try {
            await workers.stop();
          } finally {
            await database.release();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await pool?.stop().catch(() => undefined);
    await database.release().catch(() => undefined);
    throw error;
  }
}

/** The workers: forked, watched, replaced when they die, stopped together. */
class WorkerPool {
  private readonly live = new Set<Worker>();
  private readonly deaths: number[] = [];
  private readonly restarts = new Set<NodeJS.Timeout>();
  private stopping = false;
  /** While starting: rejects the start when a worker dies before serving. */
  private failStart: ((error: Error) => void) | undefined;

  constructor(
    private readonly count: number,
    private readonly env: Record<string, string>,
    private readonly logger: Logger,
    private readonly stopTimeoutMs: number,
  ) {}

  pids(): number[] {
    return [...this.live].map((worker) => worker.process.pid!).filter((pid) => pid !== undefined);
  }

  /** Forks every worker and resolves with the first one's ready message once all of them serve. */
  async start(): Promise<WorkerReady> {
    const failed = new Promise<never>((_, reject) => {
      this.failStart = reject;
    });
    failed.catch(() => undefined);
    try {
      const ready = await Promise.race([Promise.all(Array.from({ length: this.count }, () => this.fork().ready)), failed]);
      this.logger.info({ workers: this.pids() }, `${this.count} workers serving`);
      return ready[0]!;
    } finally {
      this.failStart = undefined;
    }
  }

  private fork(): { worker: Worker; ready: Promise<WorkerReady> } {
    const worker = cluster.fork(this.env);
    this.live.add(worker);
    const started = Date.now();
    const ready = new Promise<WorkerReady>((resolve) => {
      const onMessage = (message: unknown) => {
        if (!isReady(message)) return;
        worker.off('message', onMessage);
        resolve(message);
      };
      worker.on('message', onMessage);
    });
    worker.once('exit', (code, signal) => {
      this.live.delete(worker);
      if (this.stopping) return;
      const pid = worker.process.pid;
      if (this.failStart) {
        this.failStart(new Error(`worker ${pid} exited while starting (${signal ?? `code ${code}`}); see its log above`));
        return;
      }
      const now = Date.now();
      this.deaths.push(now);
      while (this.deaths.length > 0 && this.deaths[0]! < now - CRASH_WINDOW_MS) this.deaths.shift();
      const delay = restartDelay(this.deaths.length);
      this.logger.error(
        { worker: pid, code, signal, uptime_ms: now - started, restart_in_ms: delay },
        'worker died; starting a replacement',
      );
      const timer = setTimeout(() => {
        this.restarts.delete(timer);
        if (this.stopping) return;
        const replacement = this.fork();
        replacement.ready.then(
          () => this.logger.info({ worker: replacement.worker.process.pid, replaced: pid }, 'replacement worker serving'),
          () => undefined,
        );
      }, delay);
      this.restarts.add(timer);
    });
    return { worker, ready };
  }

  /**
   * SIGTERM to every worker (each stops as a single process does: no new connections, in-flight
   * requests finish within the grace period); one still running after `stopTimeoutMs` is killed.
   * Rejects when a worker did not stop cleanly.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.restarts) clearTimeout(timer);
    this.restarts.clear();
    const failures: string[] = [];
    await Promise.all(
      [...this.live].map(
        (worker) =>
          new Promise<void>((resolve) => {
            const pid = worker.process.pid;
            const kill = setTimeout(() => {
              failures.push(`worker ${pid} did not stop within ${this.stopTimeoutMs} ms and was killed`);
              worker.process.kill('SIGKILL');
            }, this.stopTimeoutMs);
            worker.once('exit', (code, signal) => {
              clearTimeout(kill);
              // Ended by the SIGTERM itself: a worker still starting has no handler yet, and nothing in flight.
              const clean = code === 0 || signal === 'SIGTERM';
              if (!clean && !failures.some((failure) => failure.startsWith(`worker ${pid} `)))
                failures.push(`worker ${pid} exited with ${signal ?? `code ${code}`}`);
              resolve();
            });
            if (worker.isDead()) {
              clearTimeout(kill);
              resolve();
              return;
            }
            worker.process.kill('SIGTERM');
          }),
      ),
    );
    if (failures.length > 0) throw new Error(failures.join('; '));
  }
}

/**
 * A worker: serves until SIGTERM or SIGINT (the primary's, or the terminal's Ctrl-C reaching
 * the whole process group), then stops as the single process does and exits. If the primary
 * is gone, node:cluster ends the worker itself (its IPC channel closes).
 */
export async function runWorker(config: AppConfig, logger: Logger): Promise<void> {
  const stop = stopOnSignals(logger, { level: 'debug', stopping: 'worker shutting down', failed: 'worker shutdown failed' });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, logger, { role: 'worker', signal: stop.signal });
  } catch (error) {
    if (stop.signal.aborted) return stop.serve(undefined);
    logger.fatal({ err: error }, 'worker start failed');
    process.stderr.write(`almoner: worker ${process.pid} could not start: ${(error as Error).message}\n`);
    logger.flush(() => process.exit(1));
    return;
  }
  const served = server.config;
  const urls = Object.fromEntries(PUBLIC_URL_KEYS.map((key) => [key, served[key]])) as WorkerReady['urls'];
  process.send!({
    type: READY,
    urls,
    listening: server.listening,
    metricsListening: server.metricsListening ?? null,
  } satisfies WorkerReady);
  logger.debug('worker serving');
  stop.serve(server);
}
