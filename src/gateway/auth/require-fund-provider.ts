import type { Middleware } from 'koa';
import { HttpProblem } from '../../http/problem.js';
import type { CredentialKind } from './accept-credentials.js';

/** What the fund-provider operations accept (and /openapi.json declares for them). */
export const FUND_PROVIDER_CREDENTIALS: readonly CredentialKind[] = ['api_key'];

/** The donor-advised-fund APIs are for fund providers, calling with their organization's API key. */
export function requireFundProvider(): Middleware {
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (!caller || !FUND_PROVIDER_CREDENTIALS.includes(caller.kind) || caller.kind !== 'api_key' || caller.organizationKind !== 'fund_provider') {
      throw new HttpProblem(403, 'Forbidden', "These operations are for donor-advised-fund providers, with their organization's API key.");
    }
    await next();
  };
}
