import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { sendMappedRefusal, tokenRefusal } from '../../http/oauth-problem.js';
import { authorizationReadFor, effectiveScopes } from '../account.js';
import { loadAuthorization } from '../../authorizations/authorizations.js';
import { answerGrantRefusal } from '../grant-refusals.js';
import { isFapi2Client } from '../client-metadata.js';
import { grantedFdxDetail, publishedFdxDetail } from '../fdx-authorization-details.js';
import { requestEntities } from '../provider-internals.js';
import { oidcState } from '../request-scope.js';
import type { AnswerStep } from './steps.js';

/**
 * The token endpoint's answer to a refusal, after the provider (and after a lost consume race,
 * which the unit of work answers): the statuses and codes of docs/oauth.md, "OAuth 2.0 and
 * OpenID Connect" (Token endpoint), decided by http/oauth-problem.ts (tokenRefusal) from the
 * refusal as raised; invalid_grant's error_description says why (grant-refusals.ts).
 */
export function answerTokenRefusal(db: Db, environment: Environment): AnswerStep {
  return async (rawCtx) => {
    const refusal = rawCtx.state.oidc?.refusal;
    if (!refusal || rawCtx.status < 400) return;
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    const mapped = await tokenRefusal(refusal, {
      fapi2: isFapi2Client(ctx.oidc?.client),
      grantType: ctx.oidc?.params?.grant_type,
      explainGrant: () => answerGrantRefusal({ db, environment }, ctx),
    });
    if (!mapped) return;
    oidcState(rawCtx).refusal = mapped;
    sendMappedRefusal(rawCtx, mapped);
  };
}

/**
 * A successful answer, after the provider and inside the unit (the refresh grace window keeps
 * the answer as shaped here):
 * - an FDX consent's authorization answers with its detail, the consent id in it
 *   (docs/bank-data.md, "Consents");
 * - for a user subject the `scope` is what the approver's current role permits.
 */
export function shapeTokenResponse(db: Db, environment: Environment): AnswerStep {
  return async (rawCtx) => {
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.status !== 200 || !body || typeof body !== 'object' || !ctx.oidc) return;
    const fdx = grantedFdxDetail(ctx.oidc.entities.Grant);
    if (fdx) body.authorization_details = [publishedFdxDetail(fdx)];
    if (typeof body.scope === 'string') {
      const grantId = requestEntities(ctx).AccessToken?.grantId;
      // findAccount read it moments ago for this very request.
      const authorization = grantId
        ? (authorizationReadFor(ctx, grantId) ?? (await loadAuthorization(db, environment, grantId)))
        : undefined;
      if (authorization) body.scope = effectiveScopes(authorization, body.scope.split(' ')).join(' ');
    }
  };
}
