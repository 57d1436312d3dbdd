import Router from '@koa/router';
import { unitOfWork } from '../middleware/unit-of-work.js';
import { BROWSER_REQUEST } from '../unit-of-work.js';
import { INTERACTION_PREFIX } from '../routes.js';
import { approve, deny, showConsentStep } from './consent-page.js';
import { loadInteraction, type InteractionDeps } from './interaction.js';
import { showLogin, submitLogin } from './login-page.js';
import { passkeyOptions, submitPasskey } from './passkey-page.js';
import { showPendingSecondFactor, submitSecondFactor, submitSecondFactorSetup } from './second-factor-page.js';

export type { InteractionDeps } from './interaction.js';

/**
 * The authorization flow's pages under /oauth/interaction/:uid: sign-in, nonprofit choice
 * and consent (GET shows whichever the flow is at), and the forms' POST targets.
 */
export function buildInteractionRouter(deps: InteractionDeps): Router {
  const router = new Router({ prefix: INTERACTION_PREFIX });
  // One unit of work per request (oidc/unit-of-work.ts): one write of the provider's rows (the
  // Interaction, a Grant) with the page's own writes, and its reads remembered, starting with
  // one read of the Interaction the URL names and what it leads to.
  const interactionUid = (path: string) => path.slice(INTERACTION_PREFIX.length + 1).split('/')[0];
  router.use(
    unitOfWork({
      db: deps.db,
      environment: deps.environment,
      planFor: () => BROWSER_REQUEST,
      hint: (ctx) => ({ interactionUid: interactionUid(ctx.path) }),
    }),
  );

  router.get('/:uid', async (ctx) => {
    const interaction = await loadInteraction(deps, ctx);
    if (interaction.prompt.name === 'login') {
      if (await showPendingSecondFactor(deps, ctx, interaction)) return;
      return showLogin(deps, ctx, interaction);
    }
    await showConsentStep(deps, ctx, interaction);
  });
  router.post('/:uid/login', (ctx) => submitLogin(deps, ctx));
  router.post('/:uid/second-factor', (ctx) => submitSecondFactor(deps, ctx));
  router.post('/:uid/second-factor/setup', (ctx) => submitSecondFactorSetup(deps, ctx));
  router.post('/:uid/passkey/options', (ctx) => passkeyOptions(deps, ctx));
  router.post('/:uid/passkey', (ctx) => submitPasskey(deps, ctx));
  router.post('/:uid/consent', (ctx) => approve(deps, ctx));
  router.post('/:uid/deny', (ctx) => deny(deps, ctx));

  return router;
}
