import type { Environment, OrganizationKind } from '../../db/schema.js';
import type { Caller } from '../routing/caller.js';

/** The grantmaking operations' callers (docs/api.md, "Organization kinds"). */
export const GRANTMAKERS: readonly OrganizationKind[] = ['grantmaker'];

/** The grantmaker and environment a caller acts for: another's ids are not found. */
export function scopeOf(caller: Caller): { organizationId: string; environment: Environment } {
  return { organizationId: caller.organizationId, environment: caller.environment };
}
