import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { poolOf, type Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { API_ROUTES, authorizationPath, endSessionPaths } from '../oidc/routes.js';
import { clusterScrape } from './cluster.js';
import { OAuthMetrics, type ProviderSource } from './oauth-metrics.js';
import { OutboxBacklog } from './outbox-backlog.js';
import { RouteLabels } from './route-label.js';
import { DELIVERY_OUTCOMES, type DeliveryOutcome } from '../webhooks/dispatcher.js';

export const METRICS_PATH = '/metrics';

export interface MetricsDeps {
  db: Db;
  /** The providers (token events) and the client-secret cache (argon2 runs), when there are any. */
  oidc?: ProviderSource & { secretCache: { argon2Runs: number; size: number } };
}

/** Seconds; from a cached gateway read (about a millisecond) to an argon2 check under load. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Everything one runtime reports to Prometheus, in a registry of its own (never prom-client's
 * global one, so several runtimes in one process keep separate counts). Per request there is
 * one histogram observation; everything else is read when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requestDuration: Histogram<'host' | 'method' | 'route' | 'status'>;
  readonly routes: RouteLabels;
  readonly oauth: OAuthMetrics;
  /** Webhook deliveries claimed by this process's dispatcher, by what became of the attempt. */
  readonly webhookAttempts: Counter<'outcome'>;
  /** Requests being served now (a plain number: the gauge reads it when scraped). */
  inFlight = 0;
  private processMetricsStarted = false;
  /** In a cluster worker: the scrape that returns the sum over every worker (joinCluster). */
  private scrapeCluster: (() => Promise<string>) | undefined;

  constructor(deps: MetricsDeps) {
    const registers = [this.registry];
    this.requestDuration = new Histogram({
      name: 'almoner_http_request_duration_seconds',
      help: 'HTTP requests by host (api, sandbox_api, dashboard, sandbox_dashboard; none when answered before host dispatch: health probes and 421s; admin on the metrics listener), method, route template and status.',
      labelNames: ['host', 'method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const inFlight = () => this.inFlight;
    new Gauge({
      name: 'almoner_http_requests_in_flight',
      help: 'HTTP requests being served.',
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    const environments: Environment[] = ['production', 'sandbox'];
    this.routes = new RouteLabels(
      [
        '/healthz',
        '/readyz',
        METRICS_PATH,
        ...Object.values(API_ROUTES),
        ...environments.map(authorizationPath),
        ...environments.flatMap(endSessionPaths),
      ],
      // The provider's authorization resume path (/oauth/authorize/<uid>).
      Object.fromEntries(environments.map((environment) => [authorizationPath(environment), `${authorizationPath(environment)}/:uid`])),
    );
    this.oauth = new OAuthMetrics(this.registry, deps.oidc);
    if (deps.oidc) secretCacheMetrics(this.registry, deps.oidc.secretCache);
    poolMetrics(this.registry, deps.db);
    outboxMetrics(this.registry, deps.db);
    this.webhookAttempts = webhookAttemptMetrics(this.registry);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * In a worker of a cluster primary (workers > 1): a scrape answered here returns the sum over
   * every worker (metrics/cluster.ts). Process metrics start now, since the scrapes that read
   * this registry are answered by the other workers too.
   */
  joinCluster(): void {
    this.startProcessMetrics();
    this.scrapeCluster = clusterScrape(this.registry);
  }

  /** The exposition text. Process metrics start with the first scrape: a runtime never scraped (tests) runs no event-loop monitor. */
  async scrape(): Promise<string> {
    if (this.scrapeCluster) return this.scrapeCluster();
    this.startProcessMetrics();
    return this.registry.metrics();
  }

  private startProcessMetrics(): void {
    if (this.processMetricsStarted) return;
    this.processMetricsStarted = true;
    collectDefaultMetrics({ register: this.registry });
  }
}

function secretCacheMetrics(registry: Registry, cache: { argon2Runs: number; size: number }): void {
  new Counter({
    name: 'almoner_client_secret_argon2_verifications_total',
    help: 'Client-secret checks that ran argon2 (cache misses); the rest were answered from the per-process cache.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.argon2Runs);
    },
  });
  new Gauge({
    name: 'almoner_client_secret_cache_entries',
    help: 'Successful client-secret checks remembered by this process.',
    registers: [registry],
    collect() {
      this.set(cache.size);
    },
  });
}

function poolMetrics(registry: Registry, db: Db): void {
  const pool = poolOf(db);
  if (!pool) return;
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('almoner_db_pool_connections', 'Open connections in the PostgreSQL pool (idle and in use).', () => pool.totalCount);
  gauge('almoner_db_pool_idle_connections', 'Open connections in the PostgreSQL pool that are idle.', () => pool.idleCount);
  gauge('almoner_db_pool_waiting_requests', 'Queries waiting for a PostgreSQL pool connection.', () => pool.waitingCount);
  gauge('almoner_db_pool_max_connections', 'The PostgreSQL pool size (database_pool_max).', () => pool.options.max ?? 10);
}

function webhookAttemptMetrics(registry: Registry): Counter<'outcome'> {
  const counter = new Counter({
    name: 'almoner_webhook_attempts_total',
    help: 'Claimed webhook deliveries by outcome: succeeded, http_error (a non-2xx answer), timeout, connection_error, refused (a non-public target), interrupted (shutdown; given back), skipped (subscription not active).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  // Every outcome is reported from the start, at 0, so a rate over it never starts with a gap.
  for (const outcome of DELIVERY_OUTCOMES) counter.inc({ outcome } satisfies { outcome: DeliveryOutcome }, 0);
  return counter;
}

function outboxMetrics(registry: Registry, db: Db): void {
  const failures = new Counter({
    name: 'almoner_metrics_collect_failures_total',
    help: 'Scrape-time reads that failed or timed out (their metrics are left out of that scrape).',
    labelNames: ['collector'],
    registers: [registry],
    async collect() {
      // Read with the gauges, so a failure of this scrape is counted in this scrape.
      await backlog.read();
    },
  });
  failures.inc({ collector: 'webhook_outbox' }, 0);
  const backlog = new OutboxBacklog(db, () => failures.inc({ collector: 'webhook_outbox' }));
  const environments: Environment[] = ['production', 'sandbox'];
  const fromBacklog = (name: string, help: string, field: 'pending' | 'lag') =>
    new Gauge({
      name,
      help,
      labelNames: ['environment'],
      registers: [registry],
      // Read from the database, the same in every worker: summed over workers it would count each delivery N times.
      aggregator: 'max',
      async collect() {
        const rows = await backlog.read();
        this.reset();
        if (!rows) return;
        for (const environment of environments) this.set({ environment }, 0);
        for (const row of rows)
          if ((environments as string[]).includes(row.environment)) this.set({ environment: row.environment }, Number(row[field]));
      },
    });
  fromBacklog('almoner_webhook_deliveries_pending', 'Webhook deliveries waiting to be sent or retried.', 'pending');
  fromBacklog(
    'almoner_webhook_delivery_lag_seconds',
    'How long the most overdue pending webhook delivery has been due (0 when none is).',
    'lag',
  );
}
