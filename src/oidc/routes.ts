import type { Environment } from '../db/schema.js';

/**
 * Where the providers' endpoints live: the authorization endpoint and the hosted pages on
 * the dashboard host, the rest on the API host. The provider configuration, the mount, the
 * hosted pages and the metrics' route labels all read them from here.
 */

export function authorizationPath(environment: Environment): string {
  return environment === 'production' ? '/oauth/authorize' : '/oauth/sandbox/authorize';
}

export const INTERACTION_PREFIX = '/oauth/interaction';
export const API_ROUTES = {
  token: '/auth/oauth/token',
  userinfo: '/auth/oauth/userinfo',
  revocation: '/auth/oauth/revoke',
  introspection: '/auth/oauth/introspect',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
  /** RFC 8414 metadata: the discovery document without its OpenID-only members (middleware/discovery.ts). */
  oauthMetadata: '/.well-known/oauth-authorization-server',
} as const;
