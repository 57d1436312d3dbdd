import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { SCOPES } from '../scopes.js';

/**
 * Discovery advertises exactly what is supported. The provider builds endpoint URLs from
 * the request's host, so the authorization endpoint (served on the dashboard host) is
 * corrected here.
 */
export function discoveryDocument(authorizationEndpoint: string): Middleware {
  return async (rawCtx, next) => {
    await next();
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (ctx.oidc?.route !== 'discovery' || ctx.status !== 200) return;
    const body = ctx.body as Record<string, unknown>;
    body.authorization_endpoint = authorizationEndpoint;
    body.response_types_supported = ['code'];
    body.response_modes_supported = ['query'];
    body.grant_types_supported = ['authorization_code', 'refresh_token'];
    body.code_challenge_methods_supported = ['S256'];
    body.token_endpoint_auth_methods_supported = ['client_secret_basic'];
    body.revocation_endpoint_auth_methods_supported = ['client_secret_basic'];
    body.introspection_endpoint_auth_methods_supported = ['client_secret_basic'];
    body.scopes_supported = [...SCOPES];
    body.subject_types_supported = ['public'];
    body.id_token_signing_alg_values_supported = ['RS256', 'ES256'];
    body.claims_supported = ['sub', 'email', 'email_verified', 'name', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce'];
    body.authorization_response_iss_parameter_supported = true;
    delete body.claims_parameter_supported;
    delete body.request_parameter_supported;
    delete body.request_uri_parameter_supported;
    delete body.require_request_uri_registration;
  };
}
