import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { VIEWS_DIR } from '../config/paths.js';
import type { Db } from '../db/database.js';
import type { HostTarget } from '../http/hosts.js';
import { buildInteractionRouter } from '../interactions/routes.js';
import { dashboardOidcRoutes } from '../oidc/mount.js';
import type { OidcService } from '../oidc/service.js';
import { composeRouter } from './api-app.js';

const STYLESHEET = fs.readFileSync(path.join(VIEWS_DIR, 'static', 'almoner.css'));

export interface DashboardDeps {
  db: Db;
  oidc: OidcService;
  csrfKey: Buffer;
}

/** The dashboard host of one environment: authorization endpoint, hosted login and consent. */
export function buildDashboardApp(target: HostTarget, deps: DashboardDeps): Middleware {
  const router = new Router();
  router.get('/', (ctx) => {
    ctx.body = { service: 'almoner', surface: 'dashboard', environment: target.environment, dashboard_url: target.origin };
  });
  router.get('/static/almoner.css', (ctx) => {
    ctx.type = 'text/css';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });
  const interactions = buildInteractionRouter({
    db: deps.db,
    environment: target.environment,
    origin: target.origin,
    provider: (): Provider => deps.oidc.provider(target.environment),
    csrfKey: deps.csrfKey,
  });
  return compose([dashboardOidcRoutes(deps.oidc, target), composeRouter(interactions), composeRouter(router)]);
}
