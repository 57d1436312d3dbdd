import type { Context } from 'koa';
import { processResetRequest, resetRequestAddress, RESET_LIFETIME_MINUTES } from '../accounts/password-resets.js';
import { readForm } from '../http/form-body.js';
import { sendPage } from '../views/page.js';
import type { DashboardDeps } from './deps.js';
import { FORGOT_PASSWORD_PATH, SIGN_IN_PATH } from './paths.js';
import { signInCsrf, verifySignInCsrf } from './sign-in-page.js';

function environmentName(deps: DashboardDeps): string {
  return deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
}

function showForgotPassword(
  deps: DashboardDeps,
  ctx: Context,
  state: { sent?: boolean; error?: string; email?: string },
  status?: number,
): void {
  sendPage(
    ctx,
    deps.environment,
    'forgot-password.njk',
    {
      requestId: ctx.state.requestId,
      action: FORGOT_PASSWORD_PATH,
      signIn: SIGN_IN_PATH,
      csrf: signInCsrf(deps, ctx),
      sent: Boolean(state.sent),
      error: state.error,
      email: state.email ?? '',
      expiresMinutes: RESET_LIFETIME_MINUTES,
    },
    { status },
  );
}

/** GET /forgot-password: the form, signed in or not. */
export function showForgotPasswordPage(deps: DashboardDeps, ctx: Context): void {
  showForgotPassword(deps, ctx, {});
}

/**
 * POST /forgot-password. The answer is the same page, status and timing whether or not an
 * account uses the address, and whether or not a limit was reached: the limits, the lookup,
 * the link and the mail all run after the response has gone, as one named background task
 * (docs/security.md, "Password reset"). Only a form that is not an address at all is told so.
 */
export async function submitForgotPassword(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const { email, problem } = resetRequestAddress(form.email ?? '');
  if (problem !== undefined) {
    return showForgotPassword(deps, ctx, { error: problem, email: form.email?.slice(0, 254) }, 400);
  }
  showForgotPassword(deps, ctx, { sent: true });
  const request = { email, ip: ctx.state.clientIp ?? '', dashboardOrigin: deps.origin, environmentName: environmentName(deps) };
  const log = ctx.state.log;
  deps.background.afterResponse(
    ctx.res,
    'password-reset-request',
    async () => {
      const outcome = await processResetRequest(deps, request, log);
      log?.debug({ outcome }, 'password reset request processed');
    },
    log,
  );
}
