import type { Middleware } from 'koa';
import { FDX_SCOPES } from '../../accounts/scopes.js';
import { insufficientScope } from '../routing/problems.js';

/**
 * The FDX API (docs/api.md, "FDX bank-data API", Access): an access token with read_only and
 * exactly one of read:bank_accounts / sync:connected_accounts. Authorization already refuses both
 * at once; a token that somehow holds both is refused here too. The 403 carries no FDX code
 * (docs/api.md, "FDX bank-data API", Errors). Runs after validateCredential, on the role-narrowed
 * scopes.
 */
export function requireFdxScope(): Middleware {
  return async (ctx, next) => {
    const caller = ctx.state.caller!;
    const scopes = caller.kind === 'access_token' ? caller.scopes : new Set<string>();
    const fdx = FDX_SCOPES.filter((s) => scopes.has(s));
    if (!scopes.has('read_only') || fdx.length !== 1) {
      throw insufficientScope(
        `read_only ${fdx[0] ?? FDX_SCOPES[0]}`,
        'The FDX API needs an access token with read_only and exactly one of read:bank_accounts or sync:connected_accounts.',
      );
    }
    await next();
  };
}
