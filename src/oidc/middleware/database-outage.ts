import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { isDatabaseUnavailable, isUnrepresentableInput } from '../../db/database.js';

const FLAG = Symbol('almoner.databaseDown');
const BAD_INPUT = Symbol('almoner.badInput');

/**
 * The provider turns any storage failure into a 500 server_error. When the cause is an
 * unreachable database, the client should hear "try again shortly": 503 with Retry-After
 * (as every other endpoint answers during an outage), never a 500. Input Postgres cannot
 * represent (a NUL byte) is the client's error: 400.
 */
export function databaseOutage(provider: Provider): Middleware {
  (provider as unknown as NodeJS.EventEmitter).on('server_error', (ctx: { state?: Record<symbol, unknown> }, error: unknown) => {
    if (ctx?.state && isDatabaseUnavailable(error)) ctx.state[FLAG] = true;
    if (ctx?.state && isUnrepresentableInput(error)) ctx.state[BAD_INPUT] = true;
  });
  return async (ctx, next) => {
    await next();
    if ((ctx.state as Record<symbol, unknown>)[BAD_INPUT]) {
      ctx.status = 400;
      if (ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)) ctx.body = { error: 'invalid_request', error_description: 'the request contains a value that cannot be accepted' };
    }
    if ((ctx.state as Record<symbol, unknown>)[FLAG]) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      if (ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)) {
        ctx.body = { error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; retry shortly.' };
      }
    }
  };
}
