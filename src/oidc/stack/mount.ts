import type { Middleware } from 'koa';
import type { Environment } from '../../db/schema.js';
import type { HostTarget } from '../../http/hosts.js';
import { API_ROUTES, authorizationPath, endSessionPaths } from '../routes.js';
import type { ProviderLifecycle } from './provider-lifecycle.js';

/**
 * Hands a request to the environment's provider. The provider builds its URLs from the
 * request, so it is given the configured origin of this host as Host and
 * X-Forwarded-Proto, and the caller address we decided on (trusted proxies only) as
 * X-Forwarded-For, never what the client sent.
 */
function delegate(providers: ProviderLifecycle, environment: Environment, target: HostTarget): Middleware {
  const origin = new URL(target.origin);
  return async (ctx) => {
    const headers = ctx.req.headers;
    headers.host = origin.host;
    headers['x-forwarded-proto'] = origin.protocol.replace(':', '');
    headers['x-forwarded-for'] = ctx.state.clientIp ?? '';
    delete headers['x-forwarded-host'];
    delete headers.forwarded;
    ctx.respond = false;
    await providers.handler(environment)(ctx.req, ctx.res);
  };
}

const API_PATHS: ReadonlySet<string> = new Set(Object.values(API_ROUTES));

/** On an API host: token, discovery, JWKS, UserInfo, revocation and introspection. */
export function apiOidcRoutes(providers: ProviderLifecycle, target: HostTarget): Middleware {
  const handle = delegate(providers, target.environment, target);
  return async (ctx, next) => (API_PATHS.has(ctx.path) ? handle(ctx, next) : next());
}

/**
 * On a dashboard host: the authorization endpoint and its resume path, and the end-session
 * endpoint with its confirmation and signed-out routes (browser-facing, beside the session
 * cookie).
 */
export function dashboardOidcRoutes(providers: ProviderLifecycle, target: HostTarget): Middleware {
  const handle = delegate(providers, target.environment, target);
  const path = authorizationPath(target.environment);
  const endSession: ReadonlySet<string> = new Set(endSessionPaths(target.environment));
  return async (ctx, next) =>
    ctx.path === path || ctx.path.startsWith(`${path}/`) || endSession.has(ctx.path) ? handle(ctx, next) : next();
}
