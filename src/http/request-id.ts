import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../logging/logger.js';
import { normaliseIp, type AddressSet } from './client-address.js';

/** What an id from a proxy may look like: short, and nothing a log line or header could misread. */
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Gives every request an id, echoed in X-Request-Id on every response (errors included) and
 * carried by its log lines. An incoming X-Request-Id is kept only from a trusted proxy (so
 * one id follows the request end to end) and only if well formed; any other caller's id is
 * replaced, so no caller can choose what our logs and audit rows correlate on.
 */
export function requestId(logger: Logger, trustedProxies?: AddressSet): Middleware {
  return async (ctx, next) => {
    beginRequestId(ctx, logger, trustedProxies);
    await next();
  };
}

/** What requestId does before the rest of the request: the id, the lazy logger, the header (the main app's requestFrame calls it directly). */
export function beginRequestId(ctx: Context, logger: Logger, trustedProxies?: AddressSet): void {
  const incoming = ctx.get('x-request-id');
  const fromProxy =
    trustedProxies !== undefined && trustedProxies.size > 0 && trustedProxies.has(normaliseIp(ctx.req.socket.remoteAddress));
  const id = fromProxy && ACCEPTABLE.test(incoming) ? incoming : crypto.randomUUID();
  ctx.state.requestId = id;
  // Made when first used: most requests log nothing at the running level, and a child
  // logger per request was a measurable share of a token request's CPU (docs/benchmarks.md).
  let log: Logger | undefined;
  Object.defineProperty(ctx.state, 'log', {
    get: () => (log ??= logger.child({ req_id: id })),
    configurable: true,
    enumerable: true,
  });
  ctx.set('X-Request-Id', id);
}
