import type { Middleware } from 'koa';
import { recordedStatus } from './client-abort.js';
import { isHealthPath } from './health.js';

/** One log line per request: never the query string, headers or body, where secrets travel. */
export function accessLog(): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The provider's own status for requests handed to it; 499 when the caller hung up first.
      const status = recordedStatus(ctx);
      const line = { method: ctx.method, path: ctx.path, status, duration_ms: Math.round(durationMs * 10) / 10, ip: ctx.state.clientIp, host: ctx.state.host };
      if (isHealthPath(ctx.method, ctx.path) && status < 400) ctx.state.log?.debug(line, 'request');
      else ctx.state.log?.info(line, 'request');
    }
  };
}
