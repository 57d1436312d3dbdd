import type { Middleware } from 'koa';
import { HttpProblem } from './problem.js';
import { isHealthPath, isLoopback } from './health.js';

/**
 * Production refuses plain HTTP with 403 "HTTPS required" and never redirects: a redirect
 * would invite clients to send credentials in clear first. HTTPS means TLS ended in this
 * process or a trusted proxy said so (see client-address). Loopback health checks are exempt.
 */
export function httpsRequired(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.protocol !== 'https') {
      const peerIsLoopback = isLoopback(ctx.req.socket.remoteAddress ?? '');
      if (!(peerIsLoopback && isHealthPath(ctx.method, ctx.path))) {
        throw new HttpProblem(
          403,
          'HTTPS required',
          'This service is only available over HTTPS; plain-HTTP requests are refused, not redirected.',
        );
      }
    }
    await next();
  };
}
