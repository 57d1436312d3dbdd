import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { AUTHORIZATION_LIFETIME_SECONDS, loadAuthorization } from '../authorizations/authorizations.js';
import { hashId } from '../db/provider-store.js';
import { findRevocationMarker } from '../authorizations/revoked-tokens-repository.js';
import { findRefreshTokenEvenExpired, GRANT_ERROR_DETAILS as D, requestEntities } from './provider-internals.js';
import { oidcState } from './request-scope.js';

/**
 * invalid_grant says why. The library answers every refused code or refresh token with the
 * same "grant request is invalid" and keeps the reason in `error_detail` (its wordings:
 * provider-internals.ts, GRANT_ERROR_DETAILS); the token endpoint
 * hears it through the provider's grant.error event (recordGrantRefusal) and, after the
 * provider, replaces the description with one of the sentences below (explainGrantRefusal).
 * None of them repeats the presented value.
 */
export const GRANT_REFUSALS = {
  codeUnknown: 'the authorization code is not known: it was never issued, or it expired',
  codeExpired: 'the authorization code has expired (codes are valid for 60 seconds); start the authorization again',
  codeUsed: 'the authorization code was already used; as a precaution the authorization it started has been revoked',
  verifierMismatch: 'code_verifier does not match the code_challenge of the authorization request',
  redirectMismatch: 'redirect_uri does not match the one of the authorization request',
  codeOtherClient: 'the authorization code was issued to another client',
  refreshOtherClient: 'the refresh token was issued to another client',
  refreshUnknown: 'the refresh token is not known: it was never issued, or it expired',
  refreshExpired: 'the refresh token has expired (31 days without use); the user must authorize again',
  refreshUsed: 'the refresh token was already used; as a precaution the authorization has been revoked',
  revoked: 'the authorization has been revoked; the user must authorize again',
  capReached: 'the authorization has reached its 365-day limit; the user must authorize again',
  approverLeft: 'the user who approved the authorization is no longer a member of the organization',
  codeOtherKey: 'the DPoP proof is signed with another key than the one the authorization request was bound to (dpop_jkt)',
  refreshOtherKey: 'the DPoP proof is signed with another key than the one the refresh token is bound to',
  proofMissing:
    "a DPoP proof is required: this client's tokens are bound to its DPoP key (send a DPoP header with a proof made for this request)",
  proofReplayed: 'this DPoP proof was already used: make a new proof for every request',
  fallback: 'grant request is invalid',
} as const;

/**
 * How the token endpoint answers a refusal the library raised as invalid_grant: its code, and
 * the sentence that says why. A missing or replayed DPoP proof is the proof's fault, not the
 * grant's: invalid_dpop_proof (RFC 9449 5), as the library answers a proof that fails its checks.
 */
export interface GrantRefusalAnswer {
  error: 'invalid_grant' | 'invalid_dpop_proof';
  description: string;
}

const PROOF_REFUSALS: ReadonlySet<string> = new Set([GRANT_REFUSALS.proofMissing, GRANT_REFUSALS.proofReplayed]);

/** grant.error listener: remembers the library's reason in the request's state. */
export function recordGrantRefusal(ctx: { state?: unknown } | undefined, error: { error?: string; error_detail?: string }): void {
  if (ctx?.state && error?.error === 'invalid_grant' && typeof error.error_detail === 'string')
    oidcState(ctx).grantRefusal = error.error_detail;
}

interface Deps {
  db: Db;
  environment: Environment;
}

const epoch = () => Math.floor(Date.now() / 1000);

/** The answer to an invalid_grant this request was refused with, from the recorded reason. */
export async function answerGrantRefusal(deps: Deps, ctx: KoaContextWithOIDC): Promise<GrantRefusalAnswer> {
  const description = await explainGrantRefusal(deps, ctx);
  return { error: PROOF_REFUSALS.has(description) ? 'invalid_dpop_proof' : 'invalid_grant', description };
}

/** The description for an invalid_grant this request was refused with, from the recorded reason. */
async function explainGrantRefusal(deps: Deps, ctx: KoaContextWithOIDC): Promise<string> {
  const detail = oidcState(ctx).grantRefusal;
  if (!detail) return GRANT_REFUSALS.fallback;
  const params = (ctx.oidc.params ?? {}) as Record<string, unknown>;
  const refresh = params.grant_type === 'refresh_token';
  const value =
    typeof (refresh ? params.refresh_token : params.code) === 'string' ? String(refresh ? params.refresh_token : params.code) : '';
  const clientId = ctx.oidc.client?.clientId ?? '';
  switch (detail) {
    case D.codeNotFound:
      return (await wasRevoked(deps.db, deps.environment, 'AuthorizationCode', value, clientId))
        ? GRANT_REFUSALS.revoked
        : GRANT_REFUSALS.codeUnknown;
    case D.refreshNotFound:
      return (await wasRevoked(deps.db, deps.environment, 'RefreshToken', value, clientId))
        ? GRANT_REFUSALS.revoked
        : GRANT_REFUSALS.refreshUnknown;
    case D.codeExpired:
      return GRANT_REFUSALS.codeExpired;
    case D.codeConsumed:
    case D.codeUsed:
      return GRANT_REFUSALS.codeUsed;
    case D.refreshUsed:
      return GRANT_REFUSALS.refreshUsed;
    case D.verifierMismatch:
      return GRANT_REFUSALS.verifierMismatch;
    case D.redirectMismatch:
      return GRANT_REFUSALS.redirectMismatch;
    case D.clientMismatch:
      return refresh ? GRANT_REFUSALS.refreshOtherClient : GRANT_REFUSALS.codeOtherClient;
    case D.refreshExpired: {
      // Its lifetime is capped at 365 days from the first issue (iiat): which limit ended it?
      const token = await findRefreshTokenEvenExpired(ctx.oidc.provider, value);
      const firstIssue = (token as { iiat?: number } | undefined)?.iiat ?? token?.iat;
      return firstIssue !== undefined && firstIssue + AUTHORIZATION_LIFETIME_SECONDS <= epoch()
        ? GRANT_REFUSALS.capReached
        : GRANT_REFUSALS.refreshExpired;
    }
    case D.grantNotFound:
      return GRANT_REFUSALS.revoked;
    case D.grantExpired:
      return GRANT_REFUSALS.capReached;
    case D.proofMissing:
      return GRANT_REFUSALS.proofMissing;
    case D.proofReplayed:
      return GRANT_REFUSALS.proofReplayed;
    case D.jktMismatch:
      return GRANT_REFUSALS.refreshOtherKey;
    case D.dpopJktMismatch:
      return GRANT_REFUSALS.codeOtherKey;
    default:
      if (detail.endsWith(D.accountMissingSuffix)) return explainMissingAccount(deps, ctx);
      return GRANT_REFUSALS.fallback;
  }
}

/** findAccount found no account for the token: why, from our authorization row. */
async function explainMissingAccount(deps: Deps, ctx: KoaContextWithOIDC): Promise<string> {
  const entities = requestEntities(ctx);
  const grantId = entities.RefreshToken?.grantId ?? entities.AuthorizationCode?.grantId;
  const authorization = grantId ? await loadAuthorization(deps.db, deps.environment, grantId) : undefined;
  if (!authorization || authorization.revoked) return GRANT_REFUSALS.revoked;
  if (authorization.expiresAt.getTime() <= Date.now()) return GRANT_REFUSALS.capReached;
  if (authorization.subjectType === 'user' && authorization.role === undefined) return GRANT_REFUSALS.approverLeft;
  return GRANT_REFUSALS.fallback;
}

/** Whether this value was a token of this kind, issued to this client, deleted by a revocation. */
async function wasRevoked(db: Db, environment: Environment, model: string, value: string, clientId: string): Promise<boolean> {
  const marker = await findRevocationMarker(db, environment, hashId(value));
  return marker?.model === model && marker.clientId === clientId;
}
