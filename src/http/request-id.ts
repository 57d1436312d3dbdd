import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../logging/logger.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Gives every request an id, echoed in X-Request-Id on every response (errors included) and
 * carried by its log lines. A well-formed incoming X-Request-Id (from a proxy) is kept so one
 * id follows the request end to end; anything else is replaced, which keeps logs clean.
 */
export function requestId(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = ACCEPTABLE.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ req_id: id });
    ctx.set('X-Request-Id', id);
    await next();
  };
}
