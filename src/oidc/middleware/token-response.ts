import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { oauthProblem, sendOAuthProblem } from '../../http/problem.js';
import { authorizationReadFor, effectiveScopes } from '../account.js';
import { loadAuthorization } from '../../authorizations/authorizations.js';
import { explainGrantRefusal } from '../grant-refusals.js';
import { isFapi2Client } from '../client-metadata.js';
import { grantedFdxDetail, publishedFdxDetail } from '../fdx-authorization-details.js';

/**
 * Token endpoint, after the provider:
 * - the status codes of docs/oauth.md, "OAuth 2.0 and OpenID Connect" (Token endpoint):
 *   invalid_grant (bad, used or expired code, wrong verifier, bad or reused refresh token) is
 *   401 for a standard client, not the library's 400, and its error_description says which
 *   (grant-refusals.ts); a fapi2 client gets RFC 6749's 400 (docs/bank-data.md);
 * - for a user subject the response's `scope` is what the approver's current role permits.
 */
export function tokenResponse(db: Db, environment: Environment): Middleware {
  return async (rawCtx, next) => {
    await next();
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (ctx.oidc?.route !== 'token') return;
    const body = ctx.body as Record<string, unknown> | undefined;
    // RFC 6749 5.2: a grant type the server has but this client may not use (client_credentials is
    // a fapi2 client's) is unauthorized_client, not the library's invalid_request.
    if (ctx.status === 400 && body?.error === 'invalid_request' && body.error_description === 'requested grant type is not allowed for this client') {
      sendOAuthProblem(ctx, oauthProblem(400, `grant_type ${String(ctx.oidc.params?.grant_type)} is not allowed for this client`), 'unauthorized_client');
      return;
    }
    if ((ctx.status === 400 || ctx.status === 401) && body?.error === 'invalid_grant') {
      sendOAuthProblem(ctx, oauthProblem(isFapi2Client(ctx.oidc.client) ? 400 : 401, await explainGrantRefusal({ db, environment }, ctx)), 'invalid_grant');
      return;
    }
    // An FDX consent's authorization answers with its detail, the consent id in it (docs/bank-data.md, "Consents").
    const fdx = ctx.status === 200 && body ? grantedFdxDetail(ctx.oidc.entities.Grant) : undefined;
    if (fdx && body) body.authorization_details = [publishedFdxDetail(fdx)];
    if (ctx.status === 200 && body && typeof body.scope === 'string') {
      const grantId = (ctx.oidc.entities as { AccessToken?: { grantId?: string } }).AccessToken?.grantId;
      // findAccount read it moments ago for this very request.
      const authorization = grantId ? (authorizationReadFor(ctx, grantId) ?? (await loadAuthorization(db, environment, grantId))) : undefined;
      if (authorization) body.scope = effectiveScopes(authorization, body.scope.split(' ')).join(' ');
    }
  };
}
