import type { Environment, OrganizationKind } from '../../db/schema.js';
import { notFound } from '../../errors/domain-error.js';
import type { Caller } from '../routing/caller.js';
import type { HandlerInput } from '../routing/route-spec.js';

/** The grantmaking operations' callers (docs/api.md, "Organization kinds"). */
export const GRANTMAKERS: readonly OrganizationKind[] = ['grantmaker'];

/** Who holds financial accounts: grantmakers, and nonprofits and platforms (their processing accounts). */
export const ACCOUNT_HOLDERS: readonly OrganizationKind[] = ['grantmaker', 'nonprofit', 'platform'];

/** The grantmaker and environment a caller acts for: another's ids are not found. */
export function scopeOf(caller: Caller): { organizationId: string; environment: Environment } {
  return { organizationId: caller.organizationId, environment: caller.environment };
}

/**
 * The simulations exist in the sandbox only: production's transfers and disbursements are settled
 * by an operator (docs/grantmaking.md), so there they are not found.
 */
export function sandboxOnly({ caller, ctx }: Pick<HandlerInput<unknown, unknown>, 'caller' | 'ctx'>): void {
  if (caller.environment !== 'sandbox') throw notFound(`${ctx.method} ${ctx.path} is available in the sandbox only.`);
}
