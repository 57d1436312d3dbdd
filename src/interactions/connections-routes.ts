import Router from '@koa/router';
import { CONNECTIONS_PATH, LOGOUT_PATH, REVOKE_PATH, revokeConnection, showConnections } from './connections-page.js';
import { SIGN_IN_PATH, submitConnectionsSignIn } from './connections-sign-in.js';
import type { InteractionDeps } from './interaction.js';
import { logout } from './logout.js';

/** The signed-in side of the dashboard: connected applications, their revocation, sign-in and sign-out. */
export function buildConnectionsRouter(deps: InteractionDeps): Router {
  const router = new Router();
  router.get(CONNECTIONS_PATH, (ctx) => showConnections(deps, ctx));
  router.post(SIGN_IN_PATH, (ctx) => submitConnectionsSignIn(deps, ctx));
  router.post(REVOKE_PATH, (ctx) => revokeConnection(deps, ctx));
  router.post(LOGOUT_PATH, (ctx) => logout(deps, ctx));
  return router;
}
