import type { Context } from 'koa';
import {
  addAuthenticatorApp,
  mayChangeFactors,
  removeAuthenticatorApp,
  replaceRecoveryCodes,
  type FactorActor,
} from '../identity/factors.js';
import { beginTotpEnrolment, secondFactorSummary } from '../mfa/second-factors.js';
import { codeFailure, totpIssuer } from '../mfa/second-factor-words.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { CONFIRM_PATH, safeReturnPath, SECURITY_PATH } from './paths.js';
import { passwordConfirmed } from './reauthentication.js';
import { listPasskeys, PASSKEY_NAME_MAX } from '../mfa/passkeys.js';
import { passkeyForm } from '../mfa/passkey-form.js';
import { shownDate, shownDay } from './dates.js';
import { sessionsSection } from './sessions-section.js';
import type { Viewer } from './viewer.js';

/**
 * The account's Security page (docs/accounts.md, "Second factors" and "Sessions"): the
 * authenticator app (set up, remove), the recovery codes (how many are left, a new set), the
 * passkeys, and the browsers signed in. Once the user has a second factor, changing any of
 * them needs a second factor proven in this session in the last 10 minutes ("Confirm it is
 * you", confirm-page.ts); removing a factor or replacing the codes also asks for the password.
 */

export const TOTP_PATH = `${SECURITY_PATH}/authenticator`;
const TOTP_REMOVE_PATH = `${TOTP_PATH}/remove`;
const RECOVERY_CODES_PATH = `${SECURITY_PATH}/recovery-codes`;

export const PASSKEYS_PATH = `${SECURITY_PATH}/passkeys`;
export const PASSKEY_OPTIONS_PATH = `${PASSKEYS_PATH}/options`;
export const PASSKEY_REMOVE_PATH = `${PASSKEYS_PATH}/remove`;

const NOTICES: Record<string, string> = {
  removed: 'The authenticator app is removed. Almoner no longer asks for its codes. Your other sessions were signed out.',
  'app-added': 'Your authenticator app is on. Your recovery codes are the ones you had.',
  'passkey-added': 'Your passkey is added. Use it to sign in, with or without your password.',
  'passkey-removed': 'The passkey is removed. It no longer signs you in. Your other sessions were signed out.',
  confirmed: 'Thank you. For the next 10 minutes you can change your second factors.',
  'signed-out': 'That browser is signed out.',
};

/** The user acting on their own factors from this session. */
export function factorActor(deps: DashboardDeps, viewer: Viewer): FactorActor {
  return { user: viewer.user, session: { environment: deps.environment, uid: viewer.session.uid }, recentProof: viewer.recentFactorProof };
}

/** Where "Confirm it is you" sends the browser back to. */
export const confirmHref = (next: string) => `${CONFIRM_PATH}?next=${encodeURIComponent(next)}`;

/** The Security page; `extra.error` says what a form below it refused. */
export async function renderSecurity(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  extra: { error?: string; status?: number; passkeyError?: string; passkeyName?: string } = {},
): Promise<void> {
  const summary = await secondFactorSummary(deps.db, viewer.user.id);
  const passkeyList = await listPasskeys(deps, viewer.user.id);
  const requiring = viewer.memberships.filter((m) => m.requireMfa).map((m) => m.name);
  const hasFactor = summary.totp || summary.passkeys > 0;
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/security.njk',
    'security',
    {
      summary,
      requiring,
      sessionHasSecondFactor: viewer.secondFactor,
      // With a factor, the forms that change factors are shown only after a recent proof.
      mayChange: !hasFactor || viewer.recentFactorProof,
      confirmHref: confirmHref(SECURITY_PATH),
      setupHref: TOTP_PATH,
      removeAction: TOTP_REMOVE_PATH,
      recoveryAction: RECOVERY_CODES_PATH,
      notice: typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined,
      error: extra.error,
      passkeyList: passkeyList.map((p) => ({
        id: p.id,
        name: p.name,
        added: shownDay(p.created_at),
        lastUsed: shownDate(p.last_used_at),
        synced: p.device_type === 'multiDevice',
        elsewhere: p.usableHere ? undefined : p.rp_id,
      })),
      passkeyForm: passkeyForm(deps, { action: PASSKEYS_PATH, optionsAction: PASSKEY_OPTIONS_PATH, label: 'Add a passkey' }),
      // At an IP address no passkey can be made here; a dev alias of this dashboard can (docs/oauth.md).
      passkeysAt: deps.passkeysAt ? { origin: deps.passkeysAt, href: `${deps.passkeysAt}${SECURITY_PATH}` } : undefined,
      passkeyRemoveAction: PASSKEY_REMOVE_PATH,
      passkeyError: extra.passkeyError,
      passkeyName: extra.passkeyName ?? '',
      passkeyNameMax: PASSKEY_NAME_MAX,
      ...(await sessionsSection(deps, viewer)),
    },
    extra.status,
  );
}

/** GET /account/security */
export async function showSecurity(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  await renderSecurity(deps, ctx, viewer);
}

/**
 * A change to the factors from a session that has not proven one recently (the user has one):
 * to "Confirm it is you", then back to `next`. True when the browser was sent there.
 */
export async function confirmFirst(deps: DashboardDeps, ctx: Context, viewer: Viewer, next: string): Promise<boolean> {
  if (await mayChangeFactors(deps.db, factorActor(deps, viewer))) return false;
  ctx.status = 303;
  ctx.redirect(confirmHref(next));
  return true;
}

async function renderSetup(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  next: string | undefined,
  error?: string,
  status?: number,
): Promise<void> {
  const enrolment = await beginTotpEnrolment(deps, { id: viewer.user.id, email: viewer.user.email }, totpIssuer(deps.environment));
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/authenticator.njk',
    'security',
    { enrolment, action: TOTP_PATH, next, codeError: error },
    status,
  );
}

/** GET /account/security/authenticator: the QR code and key of a new app (refused when one is set up: remove it first). */
export async function showTotpSetup(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  const next = typeof ctx.query.next === 'string' ? safeReturnPath(ctx.query.next) : undefined;
  if (await confirmFirst(deps, ctx, viewer, TOTP_PATH)) return;
  await renderSetup(deps, ctx, viewer, next);
}

/**
 * POST /account/security/authenticator: the first code. Right, the app is on and (for the
 * user's first factor) the recovery codes are shown once. Setting the app up does not change
 * how this session signed in: to count as signed in with it, the user confirms it is them.
 */
export async function submitTotpSetup(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const next = form.next ? safeReturnPath(form.next) : undefined;
  if (await confirmFirst(deps, ctx, viewer, TOTP_PATH)) return;
  const confirmed = await addAuthenticatorApp(deps, ctx, factorActor(deps, viewer), form.code ?? '');
  if (!confirmed.ok) {
    if (confirmed.retryAfterSeconds) ctx.set('Retry-After', String(confirmed.retryAfterSeconds));
    return renderSetup(
      deps,
      ctx,
      viewer,
      next,
      codeFailure(confirmed.retryAfterSeconds, confirmed.used),
      confirmed.retryAfterSeconds ? 429 : 400,
    );
  }
  if (!confirmed.recoveryCodes) {
    ctx.status = 303;
    ctx.redirect(`${SECURITY_PATH}?done=app-added`);
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  // The new app proves nothing about this session yet; "Done" offers to confirm with it.
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', {
    heading: 'Your authenticator app is on',
    codes: confirmed.recoveryCodes,
    continueHref: next ? confirmHref(next) : SECURITY_PATH,
  });
}

/** POST /account/security/authenticator/remove: with a recent second factor and the password typed again. */
export async function submitTotpRemoval(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  if (await confirmFirst(deps, ctx, viewer, SECURITY_PATH)) return;
  if (!(await passwordConfirmed(deps, viewer, form.password ?? '')))
    return renderSecurity(deps, ctx, viewer, { error: 'That is not your password. The authenticator app is still on.', status: 401 });
  await removeAuthenticatorApp(deps, ctx, factorActor(deps, viewer));
  ctx.status = 303;
  ctx.redirect(`${SECURITY_PATH}?done=removed`);
}

/** POST /account/security/recovery-codes: a new set (the old codes stop working), with a recent second factor and the password typed again. */
export async function submitRecoveryCodes(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  if (await confirmFirst(deps, ctx, viewer, SECURITY_PATH)) return;
  if (!(await passwordConfirmed(deps, viewer, form.password ?? '')))
    return renderSecurity(deps, ctx, viewer, { error: 'That is not your password. Your recovery codes are unchanged.', status: 401 });
  const codes = await replaceRecoveryCodes(deps, ctx, factorActor(deps, viewer));
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', {
    heading: 'Your new recovery codes',
    codes,
    continueHref: SECURITY_PATH,
    replaced: true,
  });
}
