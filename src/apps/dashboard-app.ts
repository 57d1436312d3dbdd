import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { passwordParamsFrom } from '../accounts/passwords.js';
import type { AppConfig } from '../config/schema.js';
import { VIEWS_DIR } from '../config/paths.js';
import type { Db } from '../db/database.js';
import type { HostTarget } from '../http/hosts.js';
import { buildConnectionsRouter } from '../interactions/connections-routes.js';
import { refuseCrossSitePosts } from '../interactions/csrf.js';
import { htmlErrorPages } from '../interactions/error-pages.js';
import { LoginThrottle } from '../interactions/login-throttle.js';
import { buildInteractionRouter } from '../interactions/routes.js';
import { SignIn } from '../interactions/sign-in.js';
import type { ServerKeys } from '../keys/server-keys.js';
import { dashboardOidcRoutes } from '../oidc/mount.js';
import type { OidcService } from '../oidc/service.js';
import { composeRouter } from './api-app.js';
import { buildApiReferenceRouter } from './api-reference.js';

const STYLESHEET = fs.readFileSync(path.join(VIEWS_DIR, 'static', 'almoner.css'));

export interface DashboardDeps {
  db: Db;
  oidc: OidcService;
  /** The rotating server keys (CSRF tokens, the throttle's and the audit's keyed hashes). */
  serverKeys: ServerKeys;
  /** Password hashing parameters (upgrades at sign-in); the API hosts' origins (the API reference). */
  config: Pick<AppConfig, 'password_memory_kib' | 'password_time_cost' | 'password_parallelism' | 'base_url' | 'sandbox_base_url'>;
}

/**
 * The dashboard host of one environment: the authorization endpoint, the hosted sign-in,
 * nonprofit choice and consent, the connected-applications page, and the API reference.
 */
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
  const pageDeps = {
    db: deps.db,
    environment: target.environment,
    origin: target.origin,
    provider: (): Provider => deps.oidc.provider(target.environment),
    serverKeys: deps.serverKeys,
    // Throttling state is in Postgres, so both dashboards (and every process) share it.
    signIn: new SignIn(deps.db, new LoginThrottle(deps.db, undefined, deps.serverKeys), passwordParamsFrom(deps.config), deps.serverKeys),
  };
  return compose([
    dashboardOidcRoutes(deps.oidc, target),
    htmlErrorPages(target.environment),
    refuseCrossSitePosts(target.origin),
    composeRouter(buildInteractionRouter(pageDeps)),
    composeRouter(buildConnectionsRouter(pageDeps)),
    composeRouter(buildApiReferenceRouter(target.environment, target.environment === 'sandbox' ? deps.config.sandbox_base_url : deps.config.base_url)),
    composeRouter(router),
  ]);
}
