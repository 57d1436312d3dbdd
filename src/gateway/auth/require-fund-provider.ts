import type { Middleware } from 'koa';
import { HttpProblem } from '../../http/problem.js';

/** The donor-advised-fund APIs are for fund providers, calling with their organization's API key. */
export function requireFundProvider(): Middleware {
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (caller?.kind !== 'api_key' || caller.organizationKind !== 'fund_provider') {
      throw new HttpProblem(403, 'Forbidden', "These operations are for donor-advised-fund providers, with their organization's API key.");
    }
    await next();
  };
}
