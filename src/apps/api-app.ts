import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { HostTarget } from '../http/hosts.js';

/** The API host of one environment: OAuth token side and resource gateway (later issues). */
export function buildApiApp(target: HostTarget): Middleware {
  const router = new Router();
  router.get('/', (ctx) => {
    ctx.body = { service: 'almoner', surface: 'api', environment: target.environment, base_url: target.origin };
  });
  return composeRouter(router);
}

export function composeRouter(router: Router): Middleware {
  const routes = router.routes() as unknown as Middleware;
  const allowed = router.allowedMethods() as unknown as Middleware;
  return async (ctx, next) => routes(ctx, () => allowed(ctx, next));
}
