import { errors } from 'oidc-provider';
import { API_ROUTES } from '../routes.js';
import type { RequestCheck } from './steps.js';

/** The endpoints where a client authenticates: back-channel calls of a confidential client. */
const CLIENT_ENDPOINTS: ReadonlySet<string> = new Set([
  API_ROUTES.token,
  API_ROUTES.pushedAuthorization,
  API_ROUTES.revocation,
  API_ROUTES.introspection,
]);

/**
 * A web page calling the token, PAR, revocation or introspection endpoint (docs/integrations.md,
 * "Browser applications"). Every client here is confidential, and a page cannot keep a secret
 * or a signing key, so these endpoints never serve a browser. The library answers the CORS
 * preflight with 204 and the page's origin, then refuses the request itself without one
 * (its clientBasedCORS), so the page saw only a network error. Here the request that carries an
 * Origin is refused before anything else, with the origin allowed to read why: 400
 * invalid_request, the same answer whether a preflight came first or not.
 */
export function refuseBrowserRequests(): RequestCheck {
  return (ctx) => {
    const origin = ctx.get('origin');
    if (!origin || ctx.method !== 'POST' || !CLIENT_ENDPOINTS.has(ctx.path)) return;
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', origin);
    throw new errors.InvalidRequest(
      "this endpoint does not take requests from web pages: clients are confidential, so call it from your application's backend",
    );
  };
}
