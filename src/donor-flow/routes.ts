import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { VIEWS_DIR } from '../config/paths.js';
import { HttpProblem } from '../http/problem.js';
import { cancelFlow, showConfirmPage, showDone, submitAuthorize } from './authorize-pages.js';
import { chooseDaf, showAmountPage, showStart, submitAmount } from './choice-pages.js';
import { showDonorPage, showSignInPage, submitDonor, submitSignIn } from './donor-pages.js';
import { sendRefusedForm, type DonorFlowDeps } from './flow-pages.js';

/** The script a nonprofit's page includes (docs/giving.md, "The script's API"). */
const CONNECT_SCRIPT = fs.readFileSync(path.join(VIEWS_DIR, 'static', 'connect.js'));

/**
 * The donor flow on a dashboard host: GET /connect.js, which any page may load (so it is
 * served for cross-origin use), and the flow's pages under /connect/:cid.
 */
export function buildDonorFlowRouter(deps: DonorFlowDeps): Router {
  const router = new Router();
  router.get('/connect.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.body = CONNECT_SCRIPT;
  });
  // A form the flow refuses (its token, its size or type) is a page of the flow, not the host's
  // error page, whose opener policy would cut the popup off from the page that opened it.
  const page = (handler: (deps: DonorFlowDeps, ctx: Context) => Promise<void>) => async (ctx: Context) => {
    // Every answer of the flow, its redirects included: a browser applies the opener policy to
    // each response of a navigation, and the host's own (same-origin) would cut the popup off.
    ctx.set('Cross-Origin-Opener-Policy', 'unsafe-none');
    try {
      await handler(deps, ctx);
    } catch (error) {
      if (!(error instanceof HttpProblem) || error.status >= 500) throw error;
      sendRefusedForm(deps, ctx, error.status, error.detail ?? error.message);
    }
  };
  router.get('/connect/:cid', page(showStart));
  router.post('/connect/:cid/daf', page(chooseDaf));
  router.get('/connect/:cid/amount', page(showAmountPage));
  router.post('/connect/:cid/amount', page(submitAmount));
  router.get('/connect/:cid/sign-in', page(showSignInPage));
  router.post('/connect/:cid/sign-in', page(submitSignIn));
  router.get('/connect/:cid/donor', page(showDonorPage));
  router.post('/connect/:cid/donor', page(submitDonor));
  router.get('/connect/:cid/confirm', page(showConfirmPage));
  router.post('/connect/:cid/authorize', page(submitAuthorize));
  router.get('/connect/:cid/done', page(showDone));
  router.post('/connect/:cid/cancel', page(cancelFlow));
  return router;
}
