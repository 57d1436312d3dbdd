import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

/**
 * Authorization endpoint, before the provider.
 * - `nonce` is required on every request, with or without openid. The library rejects a
 *   nonce without openid, so there it travels as `x_nonce` and the `nonce` validator
 *   accepts either (configuration.ts).
 * - The raw `scope` is copied to `x_requested_scope`, validated against the client's
 *   registration after the redirect URI is known, because the library silently drops
 *   unknown scopes and `offline_access` before its own check.
 * - Only the `query` response mode exists. Another `response_mode` (form_post, fragment,
 *   jwt, or the parameter given twice) is `invalid_request`, and an unsupported
 *   response_type is `unsupported_response_type`: both are answered in the query (RFC 6749
 *   4.1.2.1; the one mode we can deliver in) once client and redirect URI are known to be
 *   good; otherwise the provider renders its error page. Answering a form_post request in
 *   the query as if it were fine would hand the client a response it does not expect.
 */
export function authorizationRequest(provider: Provider, authorizationPath: string): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== authorizationPath || ctx.method !== 'GET') return next();
    const query = { ...ctx.query } as Record<string, string | string[] | undefined>;
    if (typeof query.response_type === 'string' && query.response_type !== 'code') {
      if (await redirectError(provider, ctx, query, 'unsupported_response_type', 'only response_type=code is supported')) return;
    } else if (query.response_mode !== undefined && query.response_mode !== 'query') {
      if (
        await redirectError(
          provider,
          ctx,
          query,
          'invalid_request',
          'response_mode is not supported: only response_mode=query (the default) is',
        )
      )
        return;
    }
    // Only the query response mode exists here: errors the provider raises for a bad client or
    // redirect URI are rendered as its error page, never sent in another mode.
    ctx.query = prepareAuthorizationParams(query);
    await next();
  };
}

/**
 * The parameters as our checks take them (above: x_requested_scope, x_nonce, the query response
 * mode), for the authorization endpoint's query and a pushed request's form alike, so a pushed
 * request is judged by the same rules (docs/bank-data.md, "Pushed authorization requests").
 */
export function prepareAuthorizationParams(
  params: Record<string, string | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  const prepared = { ...params };
  delete prepared.x_nonce;
  delete prepared.x_requested_scope;
  prepared.response_mode = 'query';
  const scope = typeof prepared.scope === 'string' ? prepared.scope : undefined;
  if (scope !== undefined) prepared.x_requested_scope = scope;
  const scopes = (scope ?? '').split(' ');
  if (!scopes.includes('openid') && prepared.nonce !== undefined) {
    prepared.x_nonce = prepared.nonce;
    delete prepared.nonce;
  }
  return prepared;
}

/** Redirects an error to a registered redirect URI in the query; false (nothing sent) when either is unknown. */
async function redirectError(
  provider: Provider,
  ctx: Parameters<Middleware>[0],
  query: Record<string, string | string[] | undefined>,
  error: string,
  description: string,
): Promise<boolean> {
  const { client_id: clientId, redirect_uri: redirectUri, state } = query;
  if (typeof clientId !== 'string' || typeof redirectUri !== 'string') return false;
  const client = await provider.Client.find(clientId).catch(() => undefined);
  if (!client || !client.redirectUriAllowed(redirectUri)) return false;
  const target = new URL(redirectUri);
  target.searchParams.set('error', error);
  target.searchParams.set('error_description', description);
  if (typeof state === 'string') target.searchParams.set('state', state);
  target.searchParams.set('iss', provider.issuer);
  ctx.status = 303;
  ctx.redirect(target.toString());
  return true;
}
