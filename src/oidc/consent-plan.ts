import type { Role, SubjectType } from '../db/schema.js';
import { hasResourceScope, intersectScopes, RESOURCE_SCOPES, ROLE_SCOPES, type Scope } from './scopes.js';

export interface ConsentPlan {
  requested: Scope[];
  granted: Scope[];
  withheld: Scope[];
  canApprove: boolean;
  /** Why approval is impossible, in words for the consent screen. */
  refusal?: string;
}

/**
 * What an approval would grant: requested ∩ client's registered ∩ what the approver's role
 * permits. Nothing is approvable when no requested resource scope survives, or when an
 * organization-subject authorization is asked of someone who is not an Owner or Admin.
 */
export function planConsent(requestedScopes: readonly string[], clientScopes: readonly string[], role: Role, subjectType: SubjectType): ConsentPlan {
  const requested = intersectScopes(requestedScopes, clientScopes);
  const granted = intersectScopes(requested, ROLE_SCOPES[role]);
  const withheld = requested.filter((s) => !granted.includes(s));
  if (subjectType === 'organization' && role !== 'owner' && role !== 'admin') {
    return { requested, granted: [], withheld: requested, canApprove: false, refusal: 'Only an Owner or Admin of the nonprofit can approve access that belongs to the organization.' };
  }
  if (hasResourceScope(requested) && !hasResourceScope(granted)) {
    const wanted = requested.filter((s) => RESOURCE_SCOPES.includes(s));
    return { requested, granted: [], withheld: requested, canApprove: false, refusal: `Your role (${role.replace('_', '-')}) does not allow you to grant ${wanted.join(', ')}.` };
  }
  if (granted.length === 0) return { requested, granted, withheld, canApprove: false, refusal: 'This request asks for nothing you can grant.' };
  return { requested, granted, withheld, canApprove: true };
}
