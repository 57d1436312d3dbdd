import type { Context } from 'koa';
import { recordAudit } from '../audit/audit-log.js';
import { readForm } from '../http/form-body.js';
import { verifyCsrf } from '../http/csrf.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { endSession, signedInSession } from '../oidc/interactions/provider-session.js';
import { ACCOUNT_PATH, safeReturnPath, SIGN_IN_PATH } from './paths.js';

/**
 * POST /oauth/logout: ends this environment's browser session (the provider session the
 * hosted pages share). Authorizations and their tokens are untouched: applications keep the
 * access they were given until it is revoked on the connections page.
 */
export async function signOut(deps: InteractionDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const session = await signedInSession(deps, ctx);
  if (session) {
    verifyCsrf(ctx, deps.serverKeys, `session:${session.uid}`, form.csrf, deps.origin);
    await endSession(deps, ctx, session);
    await recordAudit(deps.db, {
      event: 'logout',
      environment: deps.environment,
      actorUserId: session.accountId,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
    });
  }
  // A page may ask to come back after signing in again (an invitation for another account does).
  const next = safeReturnPath(form.next);
  ctx.status = 303;
  ctx.redirect(`${SIGN_IN_PATH}?signed_out=1${next === ACCOUNT_PATH ? '' : `&next=${encodeURIComponent(next)}`}`);
}
