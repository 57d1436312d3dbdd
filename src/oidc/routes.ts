import type { Environment } from '../db/schema.js';

/**
 * Where the providers' endpoints live: the authorization and end-session endpoints and the
 * hosted pages on the dashboard host, the rest on the API host. The provider configuration, the mount, the
 * hosted pages and the metrics' route labels all read them from here.
 */

export function authorizationPath(environment: Environment): string {
  return environment === 'production' ? '/oauth/authorize' : '/oauth/sandbox/authorize';
}

/**
 * RP-Initiated Logout's end-session endpoint (docs/oauth.md, "Signing out from an
 * application"). Browser-facing like the authorization endpoint, so it lives beside it on the
 * dashboard host, where the session cookie is; not /oauth/logout, which is the dashboard's own
 * sign-out form.
 */
export function endSessionPath(environment: Environment): string {
  return environment === 'production' ? '/oauth/end-session' : '/oauth/sandbox/end-session';
}

/** The end-session endpoint and the two routes the provider adds under it: the form's target and the signed-out page. */
export function endSessionPaths(environment: Environment): string[] {
  const path = endSessionPath(environment);
  return [path, `${path}/confirm`, `${path}/success`];
}

export const INTERACTION_PREFIX = '/oauth/interaction';
export const API_ROUTES = {
  token: '/auth/oauth/token',
  userinfo: '/auth/oauth/userinfo',
  revocation: '/auth/oauth/revoke',
  introspection: '/auth/oauth/introspect',
  /** Pushed authorization requests (RFC 9126), required of fapi2 clients (docs/bank-data.md). */
  pushedAuthorization: '/auth/oauth/par',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
  /** RFC 8414 metadata: the discovery document without its OpenID-only members (middleware/discovery.ts). */
  oauthMetadata: '/.well-known/oauth-authorization-server',
} as const;
