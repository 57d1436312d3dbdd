import type { Middleware } from 'koa';
import type { OrganizationKind } from '../../db/schema.js';
import { forbidden } from '../../errors/domain-error.js';
import type { CredentialKind } from './state.js';

/** What an operation for some organization kinds accepts (and /openapi.json declares for it): an organization's credentials. */
export const ORGANIZATION_CREDENTIALS: readonly CredentialKind[] = ['api_key', 'access_token'];

/**
 * Who may call an operation that names no kinds: nonprofits and fund providers, the kinds the
 * first APIs served. Every later kind (grantmakers, platforms, lockbox providers) calls only the
 * operations that name it, and gets 403 elsewhere (docs/api.md, "Organization kinds").
 */
export const DEFAULT_CALLERS: readonly OrganizationKind[] = ['nonprofit', 'fund_provider'];

/** The kinds in a sentence ("These operations are for …"). */
const KIND_WORDS: Readonly<Record<OrganizationKind, string>> = {
  nonprofit: 'nonprofits',
  fund_provider: 'donor-advised-fund providers',
  grantmaker: 'grantmakers',
  platform: 'giving platforms',
  lockbox_provider: 'lockbox providers',
};

export function callerKindsInWords(kinds: readonly OrganizationKind[]): string {
  const words = kinds.map((kind) => KIND_WORDS[kind]);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : (words[0] ?? '');
}

/**
 * Refuses (403) a caller whose organization is not of `kinds`: an API key of such an
 * organization, or an access token of an authorization for one, calls the operation. Scopes are
 * judged before, as for every operation.
 */
export function requireCallerKind(kinds: readonly OrganizationKind[]): Middleware {
  const detail = `These operations are for ${callerKindsInWords(kinds)}: call with an API key of one, or an access token of an authorization for one.`;
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (!caller || !ORGANIZATION_CREDENTIALS.includes(caller.kind) || !kinds.includes(caller.organizationKind)) throw forbidden(detail);
    await next();
  };
}

/** The donor-advised-fund APIs' callers. */
export const FUND_PROVIDERS: readonly OrganizationKind[] = ['fund_provider'];

/** The grantmaking APIs' callers (organizations, verification requests, recipient suggestions). */
export const GRANTMAKERS: readonly OrganizationKind[] = ['grantmaker'];
