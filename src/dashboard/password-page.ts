import type { Context } from 'koa';
import { sendAccountNotice } from '../accounts/notices.js';
import { changeOwnPassword } from '../accounts/password-change.js';
import { MIN_PASSWORD_LENGTH } from '../accounts/password-policy.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_PATH, FORGOT_PASSWORD_PATH } from './paths.js';
import type { Viewer } from './viewer.js';

function showPasswordPage(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  state: { error?: string; notice?: string; done?: boolean },
  status?: number,
): void {
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/password.njk',
    'account',
    {
      action: ACCOUNT_PASSWORD_PATH,
      accountHref: ACCOUNT_PATH,
      forgotHref: FORGOT_PASSWORD_PATH,
      minLength: MIN_PASSWORD_LENGTH,
      ...state,
    },
    status,
  );
}

/** GET /account/password: the form (current password, new one twice). */
export async function showPassword(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  showPasswordPage(deps, ctx, viewer, {});
}

/**
 * POST /account/password (docs/accounts.md, "Changing your password"): a wrong current
 * password is 400 and counts against the user's limit (429 past it); a refused new password
 * is 400; done, the other sessions are signed out, this one stays, and a notice is mailed.
 */
export async function submitPassword(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const outcome = await changeOwnPassword(
    deps,
    {
      userId: viewer.user.id,
      email: viewer.user.email,
      current: form.current ?? '',
      password: form.password ?? '',
      confirmation: form.confirmation ?? '',
      session: { environment: deps.environment, uid: viewer.session.uid },
      signOutApplications: form.sign_out_apps === 'on',
    },
    { ip: ctx.state.clientIp ?? null, requestId: ctx.state.requestId ?? null },
  );
  if (outcome.kind === 'limited') {
    ctx.set('Retry-After', String(outcome.retryAfterSeconds));
    return showPasswordPage(
      deps,
      ctx,
      viewer,
      {
        error: `Too many wrong current passwords. For your security, changing the password is paused for ${Math.ceil(outcome.retryAfterSeconds / 60)} minute${outcome.retryAfterSeconds > 60 ? 's' : ''}. Nothing was changed.`,
      },
      429,
    );
  }
  if (outcome.kind === 'wrong_current')
    return showPasswordPage(deps, ctx, viewer, { error: 'Your current password is not right. Nothing was changed.' }, 400);
  if (outcome.kind === 'refused') return showPasswordPage(deps, ctx, viewer, { error: outcome.problem }, 400);
  const notice = {
    how: 'change' as const,
    environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
    accountUrl: `${deps.origin}${ACCOUNT_PATH}`,
    forgotPasswordUrl: `${deps.origin}${FORGOT_PASSWORD_PATH}`,
  };
  deps.background.run(
    'password-changed-notice',
    async () => {
      await sendAccountNotice(deps.mail, viewer.user.email, 'password-changed', notice);
    },
    ctx.state.log,
  );
  const others = outcome.sessionsEnded === 1 ? '1 other session was' : `${outcome.sessionsEnded} other sessions were`;
  showPasswordPage(deps, ctx, viewer, { done: true, notice: `Your password was changed. ${others} signed out; this one stays signed in.` });
}
