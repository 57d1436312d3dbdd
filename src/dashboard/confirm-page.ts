import type { Context } from 'koa';
import { notFound } from '../errors/domain-error.js';
import { rememberChallenge, takeBrowserChallenge } from '../mfa/passkey-challenge.js';
import { passkeyForm } from '../mfa/passkey-form.js';
import { authenticationOptions, checkPasskey, countPasskeysHere, relyingParty } from '../mfa/passkeys.js';
import { codeFailure, passkeyFailure } from '../mfa/second-factor-words.js';
import { checkSecondFactorCode, secondFactorSummary } from '../mfa/second-factors.js';
import type { AuthenticationMethod } from '../accounts/authentication-methods.js';
import { stepUpSession } from '../oidc/interactions/provider-session.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { CONFIRM_PASSKEY_OPTIONS_PATH, CONFIRM_PASSKEY_PATH, CONFIRM_PATH, safeReturnPath, SECURITY_PATH } from './paths.js';
import { TOTP_PATH } from './security-page.js';
import type { Viewer } from './viewer.js';

/**
 * "Confirm it is you" (docs/accounts.md, "Second factors"): the signed-in user gives a second
 * factor they have (a code from the app, a recovery code, a passkey) again. The session then
 * counts as signed in with it (a step-up: its `amr` and `acr` say so) and, for 10 minutes, may
 * change the user's second factors. Then back to where the user was going.
 */

interface ConfirmState {
  next: string;
  error?: string;
  retryAfterSeconds?: number;
}

/** Where to go afterwards: one of our pages, the Security page by default. */
const nextOf = (value: unknown) => (typeof value === 'string' ? safeReturnPath(value) : SECURITY_PATH);

async function render(deps: DashboardDeps, ctx: Context, viewer: Viewer, state: ConfirmState, status?: number): Promise<void> {
  if (state.retryAfterSeconds) ctx.set('Retry-After', String(state.retryAfterSeconds));
  const summary = await secondFactorSummary(deps.db, viewer.user.id);
  const hasFactor = summary.totp || summary.passkeys > 0;
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/confirm.njk',
    'security',
    {
      next: state.next,
      hasFactor,
      setupHref: `${TOTP_PATH}?next=${encodeURIComponent(state.next)}`,
      totp: summary.totp,
      codesLeft: summary.recoveryCodesLeft,
      action: CONFIRM_PATH,
      codeError: state.error,
      passkeyForm:
        (await countPasskeysHere(deps, viewer.user.id)) > 0
          ? passkeyForm(deps, { action: CONFIRM_PASSKEY_PATH, optionsAction: CONFIRM_PASSKEY_OPTIONS_PATH, label: 'Use a passkey' })
          : undefined,
    },
    status,
  );
}

/** Proven: the session steps up, and the browser goes on. */
async function confirmed(deps: DashboardDeps, ctx: Context, viewer: Viewer, method: AuthenticationMethod, next: string): Promise<void> {
  await stepUpSession(deps, viewer.session, method);
  ctx.status = 303;
  ctx.redirect(next === SECURITY_PATH ? `${SECURITY_PATH}?done=confirmed` : next);
}

/** GET /account/security/confirm?next=… */
export async function showConfirm(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  await render(deps, ctx, viewer, { next: nextOf(ctx.query.next) });
}

/** POST /account/security/confirm: a code from the app, or a recovery code (counted against the user's limit, as at sign-in). */
export async function submitConfirm(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const next = nextOf(form.next);
  const check = await checkSecondFactorCode(deps, viewer.user.id, form.code ?? '');
  if (!check.ok)
    return render(
      deps,
      ctx,
      viewer,
      { next, error: codeFailure(check.retryAfterSeconds, check.used), retryAfterSeconds: check.retryAfterSeconds },
      check.retryAfterSeconds ? 429 : 401,
    );
  await confirmed(deps, ctx, viewer, check.method, next);
}

/** POST /account/security/confirm/passkey/options: the options for the browser's WebAuthn call, for the user's own passkeys (JSON). */
export async function confirmPasskeyOptions(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  if (!relyingParty(deps)) throw notFound('Passkeys need the dashboard at a domain name.');
  const options = await authenticationOptions(deps, viewer.user.id);
  await rememberChallenge(deps, ctx, 'authenticate', options.challenge, viewer.user.id);
  ctx.body = options;
}

/** POST /account/security/confirm/passkey: the passkey's answer, which must be one of the user's. */
export async function submitConfirmPasskey(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const next = nextOf(form.next);
  const challenge = await takeBrowserChallenge(deps, ctx, 'authenticate');
  const check =
    challenge && challenge.user_id === viewer.user.id ? await checkPasskey(deps, challenge, form.response) : { ok: false as const };
  if (!check.ok)
    return render(
      deps,
      ctx,
      viewer,
      { next, error: passkeyFailure(check.retryAfterSeconds), retryAfterSeconds: check.retryAfterSeconds },
      check.retryAfterSeconds ? 429 : 401,
    );
  await confirmed(deps, ctx, viewer, check.method, next);
}
