import type { OrganizationKind, Role, SubjectType } from '../db/schema.js';
import { hasResourceScope, intersectScopes, KIND_SCOPES, RESOURCE_SCOPES, ROLE_SCOPES, type Scope } from '../accounts/scopes.js';

export interface ConsentPlan {
  requested: Scope[];
  granted: Scope[];
  withheld: Scope[];
  /** The part of `withheld` the organization has nothing for (bank data of a fund provider), whatever the role. */
  notApplicable: Scope[];
  canApprove: boolean;
  /** Why approval is impossible, in words for the consent screen. */
  refusal?: string;
}

const KIND_NAMES: Readonly<Record<OrganizationKind, string>> = {
  nonprofit: 'nonprofit',
  fund_provider: 'fund provider',
  grantmaker: 'grantmaker',
  platform: 'giving platform',
  lockbox_provider: 'lockbox provider',
};

/**
 * What an approval would grant: requested ∩ client's registered ∩ what the organization has
 * (no bank data for a fund provider) ∩ what the approver's role permits. Nothing is
 * approvable when no requested resource scope survives, or when an organization-subject
 * authorization is asked of someone who is not an Owner or Admin.
 */
export function planConsent(
  requestedScopes: readonly string[],
  clientScopes: readonly string[],
  role: Role,
  subjectType: SubjectType,
  kind: OrganizationKind = 'nonprofit',
): ConsentPlan {
  const requested = intersectScopes(requestedScopes, clientScopes);
  const applicable = intersectScopes(requested, KIND_SCOPES[kind]);
  const notApplicable = requested.filter((s) => !applicable.includes(s));
  const granted = intersectScopes(applicable, ROLE_SCOPES[role]);
  const withheld = requested.filter((s) => !granted.includes(s));
  if (subjectType === 'organization' && role !== 'owner' && role !== 'admin') {
    return {
      requested,
      granted: [],
      withheld: requested,
      notApplicable,
      canApprove: false,
      refusal: `Only an Owner or Admin of the ${KIND_NAMES[kind]} can approve access that belongs to the organization.`,
    };
  }
  if (hasResourceScope(requested) && !hasResourceScope(applicable)) {
    const wanted = requested.filter((s) => RESOURCE_SCOPES.includes(s));
    return {
      requested,
      granted: [],
      withheld: requested,
      notApplicable,
      canApprove: false,
      refusal: `A ${KIND_NAMES[kind]} has no data for ${wanted.join(', ')}: bank-account access is for nonprofits.`,
    };
  }
  if (hasResourceScope(requested) && !hasResourceScope(granted)) {
    const wanted = applicable.filter((s) => RESOURCE_SCOPES.includes(s));
    return {
      requested,
      granted: [],
      withheld: requested,
      notApplicable,
      canApprove: false,
      refusal: `Your role (${role.replace('_', '-')}) does not allow you to grant ${wanted.join(', ')}.`,
    };
  }
  if (granted.length === 0)
    return { requested, granted, withheld, notApplicable, canApprove: false, refusal: 'This request asks for nothing you can grant.' };
  return { requested, granted, withheld, notApplicable, canApprove: true };
}
