import type { Middleware, ParameterizedContext } from 'koa';
import { decodeJwt } from 'jose';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { claimedClientId } from '../../http/basic-credentials.js';
import { allowListSet, CALLER_KNOWN_HEADER } from '../../http/client-address.js';
import { API_ROUTES } from '../routes.js';
import { single, takeFormBody } from './raw-form.js';

/** The endpoints where a client authenticates. */
const CLIENT_ENDPOINTS: ReadonlySet<string> = new Set([
  API_ROUTES.token,
  API_ROUTES.pushedAuthorization,
  API_ROUTES.revocation,
  API_ROUTES.introspection,
]);

/** The client a request names (HTTP Basic, a client assertion's sub, the form's client_id), when they agree on one. */
async function namedClient(ctx: ParameterizedContext): Promise<string | undefined> {
  const form = await takeFormBody(ctx);
  const names = new Set<string>();
  const basic = claimedClientId(ctx.get('authorization'));
  if (basic) names.add(basic);
  const assertion = form ? single(form.client_assertion) : undefined;
  if (assertion) {
    try {
      const { sub } = decodeJwt(assertion);
      if (typeof sub === 'string') names.add(sub);
    } catch {
      // Not a JWT: the provider refuses the authentication itself.
    }
  }
  const formId = form ? single(form.client_id) : undefined;
  if (formId) names.add(formId);
  // Two names (or none) authenticate no one: the provider refuses the request whatever this says.
  return names.size === 1 ? [...names][0] : undefined;
}

/**
 * A client's IP allow-list (its registration's `ip_allow_list`) at the endpoints where it
 * authenticates (token, pushed requests, revocation, introspection): a client that registered
 * ranges uses its credentials from inside them only, so a leaked secret or signing key mints
 * nothing elsewhere (docs/oauth.md, "IP allow-lists"). A client with no ranges is not held
 * here (the IP-restricted API areas refuse it whatever). Judged before the client
 * authenticates, on the client the request names (no secret is checked for a caller it
 * would refuse); an unknown caller address (http/client-address.ts) is inside no range.
 * Refused as a failed client authentication: 401 invalid_client, saying why.
 */
export function clientAllowList(provider: Provider, onFailure: (ctx: ParameterizedContext, error: unknown) => void): Middleware {
  return async (ctx, next) => {
    const clientId = ctx.method === 'POST' && CLIENT_ENDPOINTS.has(ctx.path) ? await namedClient(ctx) : undefined;
    let client;
    try {
      client = clientId ? await provider.Client.find(clientId) : undefined;
    } catch (error) {
      // A registration that cannot be read (the database is down) is answered as the provider answers its own storage failures.
      if (error instanceof errors.OIDCProviderError) throw error;
      return onFailure(ctx, error);
    }
    const ranges = (client as { ip_allow_list?: readonly string[] } | undefined)?.ip_allow_list ?? [];
    if (ranges.length > 0) {
      // The caller as our mount handed it over (stack/mount.ts): its address, and whether it is known.
      if (ctx.get(CALLER_KNOWN_HEADER) !== '1' || !allowListSet(ranges).has(ctx.ip))
        throw new errors.InvalidClient('the caller address is outside the IP allow-list registered for this client');
    }
    await next();
  };
}
