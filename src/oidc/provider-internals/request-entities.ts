import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * The members of the request's entities we read beyond their documented presence
 * (ctx.oidc.entities): which model instance the library puts under which name, and the
 * fields of each (lib/models/*.js). One typed view instead of a cast in every file.
 * Tripwire: test/oidc/provider-internals.test.ts ("the request's entities: the library
 * names them and fills these fields").
 */
export interface RequestEntities {
  /** Set by the token endpoint's grants (lib/helpers/grant_common.js) and by introspection (token.kind). */
  AccessToken?: { grantId?: string; jti?: string };
  /**
   * The presented refresh token (lib/actions/grants/refresh_token.js; its rotated successor
   * replaces it), or the one introspected. `iiat` is its first issue (lib/models/refresh_token.js).
   */
  RefreshToken?: { grantId?: string; jti?: string; iat?: number; iiat?: number };
  /** The presented code (lib/actions/grants/authorization_code.js). */
  AuthorizationCode?: { grantId?: string };
  /** The verified id_token_hint of an end-session request (lib/actions/end_session.js): its claims. */
  IdTokenHint?: { payload: { sub?: unknown; iat?: unknown } };
}

export function requestEntities(ctx: KoaContextWithOIDC): RequestEntities {
  return ctx.oidc.entities as RequestEntities;
}

/**
 * The login result an interaction finished with, at its resume: lib/actions/authorization/resume.js
 * puts the Interaction's result on `ctx.oidc.result` (undocumented) before the provider signs the
 * session in. middleware/sign-in-record.ts records the sign-in from it. Tripwire:
 * test/oidc/provider-internals.test.ts ("ctx.oidc.result: the resume puts the interaction's result there").
 */
export function interactionLoginOf(ctx: KoaContextWithOIDC): unknown {
  return (ctx.oidc?.result as { login?: unknown } | undefined)?.login;
}
