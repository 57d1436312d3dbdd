import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { HostTarget } from '../http/hosts.js';
import { apiOidcRoutes } from '../oidc/stack/mount.js';
import type { ProviderLifecycle } from '../oidc/stack/provider-lifecycle.js';

/** The API host of one environment: the OAuth token side and the resource gateway. */
export function buildApiApp(target: HostTarget, oidc: ProviderLifecycle, gateway: Middleware): Middleware {
  const router = new Router();
  router.get('/', (ctx) => {
    ctx.body = {
      service: 'almoner',
      surface: 'api',
      environment: target.environment,
      base_url: target.origin,
      discovery: `${target.origin}/.well-known/openid-configuration`,
    };
  });
  return compose([apiOidcRoutes(oidc, target), gateway, composeRouter(router)]);
}

export function composeRouter(router: Router): Middleware {
  const routes = router.routes() as unknown as Middleware;
  const allowed = router.allowedMethods() as unknown as Middleware;
  return async (ctx, next) => routes(ctx, () => allowed(ctx, next));
}
