import type { Context } from 'koa';
import { sendAccountNotice } from '../accounts/notices.js';
import { inspectResetLink, resetPasswordWithLink } from '../accounts/password-resets.js';
import { MIN_PASSWORD_LENGTH } from '../accounts/password-policy.js';
import { readForm } from '../http/form-body.js';
import { sendPage } from '../views/page.js';
import type { DashboardDeps } from './deps.js';
import { ACCOUNT_PATH, FORGOT_PASSWORD_PATH, RESET_PASSWORD_PATH, SIGN_IN_PATH } from './paths.js';
import { signInCsrf, verifySignInCsrf } from './sign-in-page.js';

type PageState = { state: 'form'; email: string; error?: string } | { state: 'done' } | { state: 'unknown' } | { state: 'spent' };

const STATUS: Record<PageState['state'], number | undefined> = { form: undefined, done: undefined, unknown: 404, spent: 410 };

/**
 * The link's token is in the path, so these pages tell the browser to send no Referer
 * anywhere and to keep no copy (the whole app already says so; here it is this page's own
 * promise too).
 */
function showResetPassword(deps: DashboardDeps, ctx: Context, token: string, page: PageState, status?: number): void {
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  sendPage(
    ctx,
    deps.environment,
    'reset-password.njk',
    {
      requestId: ctx.state.requestId,
      ...page,
      action: `${RESET_PASSWORD_PATH}/${token}`,
      csrf: page.state === 'form' ? signInCsrf(deps, ctx) : undefined,
      forgot: FORGOT_PASSWORD_PATH,
      signIn: SIGN_IN_PATH,
      minLength: MIN_PASSWORD_LENGTH,
    },
    { status: status ?? STATUS[page.state] },
  );
}

/** GET /reset-password/:token: the new-password form, or why the link no longer works (404 unknown, 410 used or expired). */
export async function showResetPasswordPage(deps: DashboardDeps, ctx: Context): Promise<void> {
  const token = ctx.params.token ?? '';
  const link = await inspectResetLink(deps.db, token);
  if (link.state !== 'usable') return showResetPassword(deps, ctx, token, { state: link.state });
  showResetPassword(deps, ctx, token, { state: 'form', email: link.email });
}

/**
 * POST /reset-password/:token: the new password twice. Done: every session of the user ends
 * (both dashboards, and the authorization flow's), the account gets a notice, and the page
 * sends the person to sign in with the new password (docs/accounts.md, "Password reset").
 */
export async function submitResetPassword(deps: DashboardDeps, ctx: Context): Promise<void> {
  const token = ctx.params.token ?? '';
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const outcome = await resetPasswordWithLink(
    deps.db,
    deps.passwordParams,
    { token, password: form.password ?? '', confirmation: form.confirmation ?? '', signOutApplications: form.sign_out_apps === 'on' },
    { environment: deps.environment, ip: ctx.state.clientIp ?? null, requestId: ctx.state.requestId ?? null },
  );
  if (outcome.kind === 'unknown' || outcome.kind === 'spent') return showResetPassword(deps, ctx, token, { state: outcome.kind });
  if (outcome.kind === 'refused') {
    const link = await inspectResetLink(deps.db, token);
    return showResetPassword(
      deps,
      ctx,
      token,
      { state: 'form', email: link.state === 'usable' ? link.email : '', error: outcome.problem },
      400,
    );
  }
  const notice = {
    how: 'reset' as const,
    environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
    accountUrl: `${deps.origin}${ACCOUNT_PATH}`,
    forgotPasswordUrl: `${deps.origin}${FORGOT_PASSWORD_PATH}`,
  };
  deps.background.run(
    'password-changed-notice',
    async () => {
      await sendAccountNotice(deps.mail, outcome.email, 'password-changed', notice);
    },
    ctx.state.log,
  );
  showResetPassword(deps, ctx, token, { state: 'done' });
}
