import { performance } from 'node:perf_hooks';
import type { Context, Middleware } from 'koa';
import { recordedStatus } from '../http/client-abort.js';
import { API_ROUTES } from '../oidc/routes.js';
import type { Metrics } from './metrics.js';
import { methodLabel } from './route-label.js';

/**
 * Times every request into one histogram observation, labelled by host kind, method, route
 * template and status (a request the provider answered wrote its status on the response; one
 * whose caller hung up before its answer is 499: docs/operations.md, "HTTP conventions").
 * `fallbackHost` names requests the host dispatcher did not claim.
 */
export function httpMetrics(metrics: Metrics, fallbackHost: string): Middleware {
  return async (ctx, next) => {
    const started = beginObservation(metrics, ctx);
    try {
      await next();
    } finally {
      endObservation(metrics, ctx, started, fallbackHost);
    }
  };
}

/**
 * What httpMetrics does before the rest of the request; returns when it started, for
 * endObservation, which must then run however the request ends (the main app's requestFrame
 * calls both directly).
 */
export function beginObservation(metrics: Metrics, ctx: Context): number {
  const started = performance.now();
  // Providers are rebuilt when keys rotate: make sure the current ones report their tokens.
  if (ctx.path === API_ROUTES.token) metrics.oauth.watchProviders();
  metrics.inFlight += 1;
  return started;
}

/** The request's one observation, once it has ended (normally or by a throw). */
export function endObservation(metrics: Metrics, ctx: Context, started: number, fallbackHost: string): void {
  metrics.inFlight -= 1;
  const status = recordedStatus(ctx);
  metrics.requestDuration.observe(
    { host: ctx.state.host ?? fallbackHost, method: methodLabel(ctx.method), route: metrics.routes.of(ctx), status },
    (performance.now() - started) / 1000,
  );
}
