import { ACR_TWO_FACTORS } from '../accounts/authentication-methods.js';
import { FDX_SCOPES } from '../accounts/scopes.js';

/**
 * When approving an authorization needs a second factor in the browser session
 * (docs/oauth.md, "Second factors and step-up"): write access, bank data (any FDX scope), an
 * application registered with require_mfa, an organization that requires it of its staff,
 * or an application asking for acr_values urn:almoner:loa:2. The reasons are shown on the
 * step-up page; none means a password session is enough.
 */
export function stepUpReasons(input: {
  granted: readonly string[];
  clientRequiresMfa: boolean;
  organization: { name: string; requireMfa: boolean };
  acrValues: unknown;
}): string[] {
  const reasons: string[] = [];
  if (input.granted.includes('read_write')) reasons.push('it lets the application change your organization’s data');
  if (input.granted.some((s) => (FDX_SCOPES as readonly string[]).includes(s))) reasons.push('it shares bank-account data');
  if (input.clientRequiresMfa) reasons.push('the application asks for it');
  if (input.organization.requireMfa) reasons.push(`${input.organization.name} requires a second factor of all its staff`);
  if (
    typeof input.acrValues === 'string' &&
    input.acrValues.split(' ').includes(ACR_TWO_FACTORS) &&
    !reasons.includes('the application asks for it')
  )
    reasons.push('the application asks for it');
  return reasons;
}
