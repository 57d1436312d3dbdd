import type { Middleware } from 'koa';
import { unauthorized } from '../problems.js';

/** Some APIs take access tokens only (the FDX API): an API key there is a 401. */
export function acceptAccessTokensOnly(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.credential?.kind !== 'access_token') throw unauthorized('This API accepts OAuth access tokens only, not API keys.', true);
    await next();
  };
}
