import type { Context } from 'koa';
import { readForm } from '../http/form-body.js';
import { addSessionMethod } from '../oidc/interactions/provider-session.js';
import { beginTotpEnrolment, confirmTotp, regenerateRecoveryCodes, removeTotp, secondFactorSummary } from '../mfa/second-factors.js';
import { codeFailure, totpIssuer } from '../mfa/second-factor-words.js';
import type { DashboardDeps } from './deps.js';
import { requireViewer, verifySessionCsrf } from './guards.js';
import { sendDashboardPage } from './page.js';
import { safeReturnPath, SECURITY_PATH } from './paths.js';
import { passwordConfirmed } from './reauthentication.js';
import { noticeSecondFactorChange } from '../mfa/notices.js';
import { listPasskeys, PASSKEY_NAME_MAX } from '../mfa/passkeys.js';
import { passkeyForm } from '../mfa/passkey-form.js';
import { shownDate, shownDay } from './dates.js';
import type { Viewer } from './viewer.js';

/**
 * The account's Security page (docs/oauth.md, "Second factors and step-up"): the
 * authenticator app (set up, remove), the recovery codes (how many are left, a new set) and
 * the passkeys. Removing a factor or replacing the codes asks for the password again.
 */

export const TOTP_PATH = `${SECURITY_PATH}/authenticator`;
const TOTP_REMOVE_PATH = `${TOTP_PATH}/remove`;
const RECOVERY_CODES_PATH = `${SECURITY_PATH}/recovery-codes`;

export const PASSKEYS_PATH = `${SECURITY_PATH}/passkeys`;
export const PASSKEY_OPTIONS_PATH = `${PASSKEYS_PATH}/options`;
export const PASSKEY_REMOVE_PATH = `${PASSKEYS_PATH}/remove`;

const NOTICES: Record<string, string> = {
  removed: 'The authenticator app is removed. Almoner no longer asks for its codes.',
  'passkey-added': 'Your passkey is added. Use it to sign in, with or without your password.',
  'passkey-removed': 'The passkey is removed. It no longer signs you in.',
};

/** The Security page; `extra.error` says what a form below it refused. */
export async function renderSecurity(deps: DashboardDeps, ctx: Context, viewer: Viewer, extra: { error?: string; status?: number; passkeyError?: string; passkeyName?: string } = {}): Promise<void> {
  const summary = await secondFactorSummary(deps.db, viewer.user.id);
  const passkeyList = await listPasskeys(deps, viewer.user.id);
  const requiring = viewer.memberships.filter((m) => m.requireMfa).map((m) => m.name);
  sendDashboardPage(deps, ctx, viewer, 'dashboard/security.njk', 'security', {
    summary,
    requiring,
    sessionHasSecondFactor: viewer.secondFactor,
    setupHref: TOTP_PATH,
    removeAction: TOTP_REMOVE_PATH,
    recoveryAction: RECOVERY_CODES_PATH,
    notice: typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined,
    error: extra.error,
    passkeyList: passkeyList.map((p) => ({ id: p.id, name: p.name, added: shownDay(p.created_at), lastUsed: shownDate(p.last_used_at), synced: p.device_type === 'multiDevice', elsewhere: p.usableHere ? undefined : p.rp_id })),
    passkeyForm: passkeyForm(deps, { action: PASSKEYS_PATH, optionsAction: PASSKEY_OPTIONS_PATH, label: 'Add a passkey' }),
    passkeyRemoveAction: PASSKEY_REMOVE_PATH,
    passkeyError: extra.passkeyError,
    passkeyName: extra.passkeyName ?? '',
    passkeyNameMax: PASSKEY_NAME_MAX,
  }, extra.status);
}

/** GET /account/security */
export async function showSecurity(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await requireViewer(deps, ctx);
  if (!viewer) return;
  await renderSecurity(deps, ctx, viewer);
}

async function renderSetup(deps: DashboardDeps, ctx: Context, viewer: Viewer, next: string | undefined, error?: string, status?: number): Promise<void> {
  const enrolment = await beginTotpEnrolment(deps, { id: viewer.user.id, email: viewer.user.email }, totpIssuer(deps.environment));
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/authenticator.njk', 'security', { enrolment, action: TOTP_PATH, next, codeError: error }, status);
}

/** GET /account/security/authenticator: the QR code and key of a new app (refused when one is set up: remove it first). */
export async function showTotpSetup(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await requireViewer(deps, ctx);
  if (!viewer) return;
  const next = typeof ctx.query.next === 'string' ? safeReturnPath(ctx.query.next) : undefined;
  await renderSetup(deps, ctx, viewer, next);
}

/**
 * POST /account/security/authenticator: the first code. Right, the app is on, this session
 * counts as signed in with it, and the recovery codes are shown once.
 */
export async function submitTotpSetup(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, TOTP_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  const next = form.next ? safeReturnPath(form.next) : undefined;
  const confirmed = await confirmTotp(deps, viewer.user.id, form.code ?? '');
  if (!confirmed.ok) {
    if (confirmed.retryAfterSeconds) ctx.set('Retry-After', String(confirmed.retryAfterSeconds));
    return renderSetup(deps, ctx, viewer, next, codeFailure(confirmed.retryAfterSeconds), confirmed.retryAfterSeconds ? 429 : 400);
  }
  await addSessionMethod(viewer.session, 'otp');
  noticeSecondFactorChange(deps, ctx, viewer.user.email, 'added', 'an authenticator app');
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', { heading: 'Your authenticator app is on', codes: confirmed.recoveryCodes, continueHref: next ?? SECURITY_PATH });
}

/** POST /account/security/authenticator/remove: with the password typed again. */
export async function submitTotpRemoval(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, SECURITY_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  if (!(await passwordConfirmed(deps, viewer, form.password ?? ''))) return renderSecurity(deps, ctx, viewer, { error: 'That is not your password. The authenticator app is still on.', status: 401 });
  if (await removeTotp(deps, viewer.user.id)) noticeSecondFactorChange(deps, ctx, viewer.user.email, 'removed', 'the authenticator app');
  ctx.status = 303;
  ctx.redirect(`${SECURITY_PATH}?done=removed`);
}

/** POST /account/security/recovery-codes: a new set (the old codes stop working), with the password typed again. */
export async function submitRecoveryCodes(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, SECURITY_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  if (!(await passwordConfirmed(deps, viewer, form.password ?? ''))) return renderSecurity(deps, ctx, viewer, { error: 'That is not your password. Your recovery codes are unchanged.', status: 401 });
  const codes = await regenerateRecoveryCodes(deps, viewer.user.id);
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', { heading: 'Your new recovery codes', codes, continueHref: SECURITY_PATH, replaced: true });
}
