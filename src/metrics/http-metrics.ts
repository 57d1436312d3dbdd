import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
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
  const { requestDuration, routes, oauth } = metrics;
  return async (ctx, next) => {
    const started = performance.now();
    // Providers are rebuilt when keys rotate: make sure the current ones report their tokens.
    if (ctx.path === API_ROUTES.token) oauth.watchProviders();
    metrics.inFlight += 1;
    try {
      await next();
    } finally {
      metrics.inFlight -= 1;
      const status = recordedStatus(ctx);
      requestDuration.observe(
        { host: ctx.state.host ?? fallbackHost, method: methodLabel(ctx.method), route: routes.of(ctx), status },
        (performance.now() - started) / 1000,
      );
    }
  };
}
