import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { HostTarget } from '../http/hosts.js';
import { composeRouter } from './api-app.js';

/** The dashboard host of one environment: hosted login, consent and connections (later issues). */
export function buildDashboardApp(target: HostTarget): Middleware {
  const router = new Router();
  router.get('/', (ctx) => {
    ctx.body = { service: 'almoner', surface: 'dashboard', environment: target.environment, dashboard_url: target.origin };
  });
  return composeRouter(router);
}
