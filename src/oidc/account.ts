import type { KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { isLive, type AuthorizationContext } from '../authorizations/authorizations.js';
import { authorizationForRequest } from './unit-reads.js';
import { markAuthorizationUsed } from '../authorizations/repository.js';
import { hasResourceScope, narrowToRole } from '../accounts/scopes.js';
import { oidcState, unitOf } from './request-scope.js';
import { userIdentity } from './request-account.js';
import { UseDebounce } from '../audit/use-debounce.js';

/** 412: the approving user's current role permits none of the token's resource scopes. */
export class InsufficientPermissions extends errors.OIDCProviderError {
  constructor(description: string) {
    super(412, 'insufficient_permissions');
    this.error_description = description;
    this.expose = true;
  }
}

interface TokenLike {
  grantId?: string;
  scope?: string;
  kind?: string;
}

export function accountFor(sub: string, email: string, name: string | null) {
  return {
    accountId: sub,
    async claims() {
      return { sub, email, email_verified: true, ...(name ? { name } : {}) };
    },
  };
}

/** The authorization findAccount read for this token request, so later steps need not read it again. */
export function authorizationReadFor(ctx: { state?: unknown }, grantId: string): AuthorizationContext | undefined {
  const authorization = oidcState(ctx).authorization;
  return authorization?.grantId === grantId ? authorization : undefined;
}

/** last_used_at is informational: written at most once a minute per authorization per process. */
const recordedUse = new UseDebounce();

/**
 * The scopes an authorization can exercise right now: as approved for an organization
 * subject; narrowed by the approver's current role for a user subject (none once they left).
 */
export function effectiveScopes(authorization: AuthorizationContext, scopes: Iterable<string>): string[] {
  if (authorization.subjectType === 'organization') return [...scopes];
  if (authorization.userDisabled) return [];
  return narrowToRole(scopes, authorization.role);
}

/**
 * oidc-provider's findAccount. With a token (code, refresh token, access token) the
 * authorization behind it is re-read on every use: revoked or expired → no account
 * (invalid_grant → 401); a user subject whose approver left → no account; a role that
 * permits none of the token's resource scopes at the token endpoint → 412.
 */
export function makeFindAccount(db: Db, environment: Environment) {
  return async (ctx: KoaContextWithOIDC, sub: string, token?: TokenLike) => {
    if (token?.grantId) {
      // At the token endpoint the authorization was read together with the code or refresh token.
      const authorization = await authorizationForRequest(db, environment, token.grantId, unitOf(ctx));
      if (!authorization || !isLive(authorization) || authorization.userId !== sub) return undefined;
      if (authorization.subjectType === 'user') {
        if (authorization.role === undefined || authorization.userDisabled) return undefined;
        const tokenScopes = (token.scope ?? '').split(' ').filter(Boolean);
        if (
          ctx.oidc?.route === 'token' &&
          hasResourceScope(tokenScopes) &&
          !hasResourceScope(effectiveScopes(authorization, tokenScopes))
        ) {
          throw new InsufficientPermissions(
            `the approving user's current role (${authorization.role}) permits none of the requested scopes`,
          );
        }
      }
      if (ctx.oidc?.route === 'token') {
        oidcState(ctx).authorization = authorization;
        if (recordedUse.due(authorization.grantId)) {
          const unit = unitOf(ctx);
          if (unit) unit.usedGrantId = authorization.grantId;
          else void markAuthorizationUsed(db, authorization.grantId).catch(() => undefined);
        }
      }
      return accountFor(sub, authorization.email, authorization.displayName);
    }
    if (!/^[0-9a-f-]{36}$/i.test(sub)) return undefined;
    const user = await userIdentity(db, sub, unitOf(ctx));
    if (!user || user.disabled_at) return undefined;
    return accountFor(user.id, user.email, user.display_name);
  };
}
