import Koa, { type Context, type Middleware } from 'koa';
import type { Db } from '../db/database.js';
import { callerInside, normaliseIp, type AddressSet } from '../http/client-address.js';
import { errorHandler } from '../http/error-handler.js';
import { DomainError } from '../errors/domain-error.js';
import { healthEndpoints, type ReadinessWarning } from '../http/health.js';
import { requestId } from '../http/request-id.js';
import { securityHeaders } from '../http/security-headers.js';
import type { Logger } from '../logging/logger.js';
import { httpMetrics } from './http-metrics.js';
import { METRICS_PATH, type Metrics } from './metrics.js';

/**
 * GET /metrics for callers inside `allow` (metrics_allow; loopback by default), judged by the
 * caller address clientAddress decided on (an unknown address is outside). Anyone else, and
 * any other method, falls through to the app behind, which answers exactly as for a path
 * that does not exist: a 404, so the endpoint is not even advertised.
 */
export function metricsEndpoint(
  metrics: Pick<Metrics, 'scrape' | 'contentType'>,
  allow: AddressSet,
  servedHere: (ctx: Context) => boolean = () => true,
): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== METRICS_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD') || !servedHere(ctx) || !callerInside(allow, ctx.state))
      return next();
    let body: string;
    try {
      body = await metrics.scrape();
    } catch (error) {
      // With workers, a scrape that meets a worker dying (or the primary busy) cannot add up;
      // the scraper should try again, as Prometheus does at its next interval. Never a 500.
      throw new DomainError('unavailable', `The metrics could not be collected: ${(error as Error).message}`, { retryAfterSeconds: 5 });
    }
    ctx.type = metrics.contentType;
    ctx.body = body;
  };
}

export interface MetricsAppDeps {
  metrics: Metrics;
  db: Db;
  logger: Logger;
  allow: AddressSet;
  /** What /readyz lists beside "ready"; their details for the callers inside `allow`. */
  readinessWarnings?: () => readonly ReadinessWarning[];
}

/**
 * The admin listener (metrics_listen): /metrics, /healthz and /readyz on a port of its own,
 * whatever the Host. No proxy stands in front of it, so the socket peer is the caller.
 */
export function buildMetricsApp({ metrics, db, logger, allow, readinessWarnings }: MetricsAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(requestId(logger)); // no proxy in front: every incoming id is replaced
  app.use(async (ctx, next) => {
    ctx.state.clientIp = normaliseIp(ctx.req.socket.remoteAddress);
    ctx.state.clientIpKnown = ctx.state.clientIp !== '';
    await next();
  });
  app.use(httpMetrics(metrics, 'admin'));
  app.use(errorHandler());
  app.use(securityHeaders());
  app.use(healthEndpoints(db, { warnings: readinessWarnings, showDetail: (ctx) => callerInside(allow, ctx.state) }));
  app.use(metricsEndpoint(metrics, allow));
  return app;
}
