import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { findConsumedAt, hashId } from '../../db/provider-store.js';
import { effectiveScopes } from '../account.js';
import { authorizationForRequest } from '../unit-reads.js';
import { isLive } from '../../authorizations/authorizations.js';
import { requestEntities } from '../provider-internals.js';
import { unitOf } from '../request-scope.js';
import { hasResourceScope } from '../../accounts/scopes.js';
import { grantedFdxDetail } from '../fdx-authorization-details.js';

/**
 * Introspection reports what a token can do now: the effective (role-narrowed) scope, and
 * `active: false` once the authorization is revoked, the user subject has left, or nothing
 * of its resource scope remains; and a refresh token once it has been exchanged, also inside
 * refresh_reuse_grace_seconds, where the adapter reports it unconsumed so that a duplicate of
 * the exchange reaches the token endpoint's replay of the successor (docs/security.md,
 * "Refresh token replay inside the grace window"): that window is for the exchange, not for
 * callers asking whether the token still works.
 */
export function introspectionResponse(db: Db, environment: Environment): Middleware {
  return async (rawCtx, next) => {
    await next();
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (ctx.oidc?.route !== 'introspection' || ctx.status !== 200) return;
    const body = ctx.body as Record<string, unknown>;
    if (body.active !== true) return;
    const entities = requestEntities(ctx);
    const refreshToken = entities.AccessToken ? undefined : entities.RefreshToken?.jti;
    if (refreshToken !== undefined && (await consumedAt(db, environment, refreshToken, unitOf(ctx)))) {
      ctx.body = { active: false };
      return;
    }
    const grantId = (entities.AccessToken ?? entities.RefreshToken)?.grantId;
    // Read with the token itself (unit-reads.ts) unless the token came from elsewhere.
    const authorization = grantId ? await authorizationForRequest(db, environment, grantId, unitOf(ctx)) : undefined;
    if (!authorization || !isLive(authorization)) {
      ctx.body = { active: false };
      return;
    }
    const granted = typeof body.scope === 'string' ? body.scope.split(' ').filter(Boolean) : [];
    const effective = effectiveScopes(authorization, granted);
    const userGone = authorization.subjectType === 'user' && (authorization.role === undefined || authorization.userDisabled);
    if (userGone || (hasResourceScope(granted) && !hasResourceScope(effective))) {
      ctx.body = { active: false };
      return;
    }
    body.scope = effective.join(' ');
    body.subject_type = authorization.subjectType;
    // FDX (docs/bank-data.md, "Consents"): a token of a consent is active while the consent is. A
    // revoked consent's authorization is revoked with it (above); its end is kept on the Grant,
    // which the request's unit read with the token, so this costs no statement.
    const fdx = grantId ? grantedFdxDetail(await grantPayload(ctx, grantId)) : undefined;
    if (fdx) {
      if (fdx.consentEnds !== undefined && fdx.consentEnds * 1000 <= Date.now()) {
        ctx.body = { active: false };
        return;
      }
      body.fdxConsentId = fdx.consentId;
    }
  };
}

/** The token's Grant as the request's unit read it with the token, else from the provider. */
async function grantPayload(ctx: KoaContextWithOIDC, grantId: string): Promise<unknown> {
  const read = unitOf(ctx)?.rows.get(`Grant:${hashId(grantId)}`);
  if (read !== undefined) return read?.payload;
  return ctx.oidc.provider.Grant.find(grantId);
}

/** When a refresh token was exchanged (null: not yet): as the request's unit read it, else from the table. */
async function consumedAt(
  db: Db,
  environment: Environment,
  token: string,
  unit: ReturnType<typeof unitOf>,
): Promise<Date | null | undefined> {
  const id = hashId(token);
  const read = unit?.rows.get(`RefreshToken:${id}`);
  if (read !== undefined) return read?.consumed_at ?? null;
  return findConsumedAt(db, environment, 'RefreshToken', id);
}
