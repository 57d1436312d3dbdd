import type { Middleware } from 'koa';
import { unauthorized } from '../routing/problems.js';
import { environmentOf } from '../routing/environment.js';

/**
 * The FDX Consent API's credential (docs/bank-data.md, "Consent API"): a data recipient's own
 * client-credentials token, unexpired, of a client still registered with the fapi2 profile (its
 * DPoP proof was checked before). The caller is that client; which consents it may see is the
 * route's business. Anything else, a user's access token included, is 401.
 */
export function validateClientToken(): Middleware {
  return async (ctx, next) => {
    const credential = ctx.state.credential;
    const row = credential?.kind === 'client_credentials' ? credential.row : undefined;
    const live = row && row.payload.kind === 'ClientCredentials' && row.payload.exp && row.payload.exp * 1000 > Date.now();
    if (!row || !live || !row.client_id || row.profile !== 'fapi2') {
      throw unauthorized(
        "The Consent API takes the data recipient's own client-credentials token (grant_type=client_credentials, DPoP-bound).",
        true,
      );
    }
    ctx.state.recipient = { environment: environmentOf(ctx), clientId: row.client_id };
    await next();
  };
}
