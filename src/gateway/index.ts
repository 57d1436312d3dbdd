import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { Db } from '../db/database.js';
import { donationRoutes } from './donations/routes.js';
import { grantRoutes } from './grants/routes.js';
import { nonprofitRoutes } from './nonprofits/routes.js';
import { buildOpenApiDocument } from './openapi.js';
import type { RouteSpec } from './route-spec.js';
import { buildGatewayRouter } from './router.js';
import { apiVersion, type ApiVersion } from './versions.js';

/** Every gateway operation; later areas (FDX, DAF) add theirs. */
export const GATEWAY_ROUTES: readonly RouteSpec[] = [...donationRoutes, ...grantRoutes, ...nonprofitRoutes] as unknown as RouteSpec[];

export interface GatewayDeps {
  db: Db;
  origin: string;
  ipRestrictedAreas: readonly string[];
}

/** The resource gateway of one API host: /v1 operations and /openapi.json. */
export function buildGateway(deps: GatewayDeps): Middleware {
  const versioned = compose([apiVersion(), buildGatewayRouter(GATEWAY_ROUTES, { db: deps.db, ipRestrictedAreas: deps.ipRestrictedAreas })]);
  const docs = new Router();
  const cache = new Map<string, unknown>();
  docs.get('/openapi.json', apiVersion(), (ctx) => {
    const version = ctx.state.apiVersion as ApiVersion;
    if (!cache.has(version)) cache.set(version, buildOpenApiDocument(GATEWAY_ROUTES, version, deps.origin));
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = cache.get(version);
  });
  const docsRoutes = docs.routes() as unknown as Middleware;
  return async (ctx, next) => {
    if (ctx.path === '/v1' || ctx.path.startsWith('/v1/')) return versioned(ctx, next);
    return docsRoutes(ctx, next);
  };
}
