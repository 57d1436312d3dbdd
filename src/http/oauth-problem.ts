import type { Context } from 'koa';
import { oauthProblem, sendOAuthProblem, unavailable, type HttpProblem } from './problem.js';

/**
 * How an OAuth refusal is answered at the provider's endpoints (docs/oauth.md, "OAuth 2.0 and
 * OpenID Connect"): the one place that decides the status, the `error` and the challenge of an
 * OAuth error. Callers hand it the error object as raised (oidc-provider's error classes, and
 * ours built from them, carry `error`, `error_description` and `statusCode`), never a rendered
 * body. The bodies keep RFC 6749's `{error, error_description}` (sendOAuthProblem).
 */

/** An OAuth error as raised: the members oidc-provider's error classes carry. */
export interface OAuthRefusal {
  error: string;
  error_description?: string;
  statusCode?: number;
}

/** RFC 6749 5.2: a failed client authentication is 401 (the library's InvalidClient is 400). */
export function refusalStatus(refusal: OAuthRefusal): number {
  return refusal.error === 'invalid_client' ? 401 : (refusal.statusCode ?? 400);
}

/** Renders a refusal raised by our middleware around the provider, as the provider renders its own. */
export function sendOAuthRefusal(ctx: Context, refusal: OAuthRefusal): OAuthRefusal {
  const status = refusalStatus(refusal);
  const headers: Record<string, string> = refusal.error === 'invalid_client' ? { 'WWW-Authenticate': 'Basic realm="almoner"' } : {};
  sendOAuthProblem(ctx, oauthProblem(status, refusal.error_description, headers), refusal.error);
  return { error: refusal.error, error_description: refusal.error_description, statusCode: status };
}

/** The library's description of a grant type the server has but the client may not use. */
const GRANT_TYPE_NOT_ALLOWED = 'requested grant type is not allowed for this client';

/** What the token endpoint needs to know about the request to answer a refusal. */
export interface TokenRefusalContext {
  /** A bank-data (fapi2) client: RFC 6749's 400 for invalid_grant (docs/bank-data.md). */
  fapi2: boolean;
  grantType: unknown;
  /**
   * Why the grant was refused, in words, and the code that says it (grant-refusals.ts: a missing
   * or replayed DPoP proof is invalid_dpop_proof); asked only for invalid_grant.
   */
  explainGrant: () => Promise<{ error: string; description: string }>;
}

/**
 * The token endpoint's answer to a refusal, where it differs from the library's (undefined:
 * the library's stands):
 * - a grant type the server has but this client may not use (client_credentials is a fapi2
 *   client's) is unauthorized_client (RFC 6749 5.2), not the library's invalid_request;
 * - invalid_grant (bad, used or expired code, wrong verifier, bad or reused refresh token) is
 *   401 for a standard client, not the library's 400, and says which; a fapi2 client gets 400;
 *   one that is the DPoP proof's fault (missing, replayed) is 400 with the code explainGrant names.
 */
export async function tokenRefusal(
  refusal: OAuthRefusal,
  request: TokenRefusalContext,
): Promise<(OAuthRefusal & { statusCode: number }) | undefined> {
  if (refusal.error === 'invalid_request' && refusal.statusCode === 400 && refusal.error_description === GRANT_TYPE_NOT_ALLOWED) {
    return {
      error: 'unauthorized_client',
      error_description: `grant_type ${String(request.grantType)} is not allowed for this client`,
      statusCode: 400,
    };
  }
  if (refusal.error === 'invalid_grant') {
    const why = await request.explainGrant();
    if (why.error !== 'invalid_grant') return { error: why.error, error_description: why.description, statusCode: 400 };
    return { error: 'invalid_grant', error_description: why.description, statusCode: request.fapi2 ? 400 : 401 };
  }
  return undefined;
}

/** Renders a refusal the token endpoint mapped (tokenRefusal). */
export function sendMappedRefusal(ctx: Context, refusal: OAuthRefusal & { statusCode: number }): void {
  sendOAuthProblem(ctx, oauthProblem(refusal.statusCode, refusal.error_description), refusal.error);
}

/** Why the provider's storage failed, as the request's state records it. */
export type StorageFailure = 'unavailable' | 'bad_input';

/**
 * The provider turns any storage failure into a 500 server_error. An unreachable database is
 * "try again shortly": 503 with Retry-After, as every other endpoint answers during an outage.
 * Input Postgres cannot represent (a NUL byte) is the client's error: 400.
 */
export function storageFailureProblem(failure: StorageFailure | undefined): HttpProblem | undefined {
  if (failure === 'unavailable') return unavailable();
  if (failure === 'bad_input') return oauthProblem(400, 'the request contains a value that cannot be accepted');
  return undefined;
}

/** A failure of ours inside the provider's endpoints, answered as the provider answers its own (server_error). */
export function sendServerError(ctx: Context): void {
  sendOAuthProblem(ctx, oauthProblem(500, 'oops! something went wrong'), 'server_error');
}

/** An auth-param value as a quoted-string (RFC 9110 5.6.4); undefined when it cannot be one. */
function quoted(value: string): string | undefined {
  if (!/^[\x20-\x7e]*$/.test(value)) return undefined;
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** `Scheme name="value", …`, leaving out parameters that are absent or cannot be quoted. */
export function formatChallenge(scheme: string, parameters: Record<string, string | undefined>): string {
  const rendered = Object.entries(parameters).flatMap(([name, value]) => {
    const q = value === undefined ? undefined : quoted(value);
    return q === undefined ? [] : [`${name}=${q}`];
  });
  return rendered.length ? `${scheme} ${rendered.join(', ')}` : scheme;
}

/**
 * The WWW-Authenticate of a 401 (RFC 9110 15.5.2), from the refusal it answers. Where the
 * client authenticates (token, introspection, revocation, pushed requests) it is a Basic
 * challenge, the scheme those endpoints accept (RFC 6749 5.2), with the OAuth error, and it
 * replaces any other; elsewhere (UserInfo) the library's Bearer challenge (RFC 6750 3) stands,
 * and a 401 without one gets one. Undefined: leave the header as it is.
 */
export function challengeFor(
  realm: string,
  clientAuthenticated: boolean,
  refusal: OAuthRefusal | undefined,
  existing: string,
): string | undefined {
  if (clientAuthenticated)
    return formatChallenge('Basic', { realm, error: refusal?.error ?? 'invalid_client', error_description: refusal?.error_description });
  if (existing) return undefined;
  return formatChallenge('Bearer', { realm, error: refusal?.error ?? 'invalid_token', error_description: refusal?.error_description });
}
