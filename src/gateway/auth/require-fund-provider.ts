import type { Middleware } from 'koa';
import { forbidden } from '../../errors/domain-error.js';
import type { CredentialKind } from './state.js';

/** What the fund-provider operations accept (and /openapi.json declares for them). */
export const FUND_PROVIDER_CREDENTIALS: readonly CredentialKind[] = ['api_key', 'access_token'];

/**
 * The donor-advised-fund APIs are for fund providers: an API key of a fund-provider
 * organization, or an access token of an authorization for one (its staff connect
 * applications like a nonprofit's do). Scopes are judged before, as for every operation.
 */
export function requireFundProvider(): Middleware {
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (!caller || !FUND_PROVIDER_CREDENTIALS.includes(caller.kind) || caller.organizationKind !== 'fund_provider') {
      throw forbidden(
        'These operations are for donor-advised-fund providers: call with an API key of a fund provider, or an access token of an authorization for one.',
      );
    }
    await next();
  };
}
