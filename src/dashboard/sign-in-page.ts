import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { User } from '../db/schema.js';
import { readForm } from '../http/form-body.js';
import { pageCookie } from '../http/page-cookie.js';
import { sendPage } from '../views/page.js';
import { csrfToken, verifyCsrf } from '../http/csrf.js';
import { startSession } from '../oidc/interactions/provider-session.js';
import { lockoutMessage, PASSKEY_SIGN_IN_FAILED, SIGN_IN_FAILED } from '../identity/sign-in-messages.js';
import type { DashboardDeps } from './deps.js';
import {
  CONNECTIONS_PATH,
  CONNECTIONS_SIGN_IN_PATH,
  FORGOT_PASSWORD_PATH,
  safeReturnPath,
  SECOND_FACTOR_PATH,
  SIGN_IN_PASSKEY_OPTIONS_PATH,
  SIGN_IN_PASSKEY_PATH,
  SIGN_IN_PATH,
} from './paths.js';
import { currentViewer } from './viewer.js';
import { checkSecondFactorCode, hasEnrolledSecondFactor, secondFactorSummary } from '../mfa/second-factors.js';
import { passkeyForm } from '../mfa/passkey-form.js';
import { rememberChallenge, takeBrowserChallenge } from '../mfa/passkey-challenge.js';
import { authenticationOptions, checkPasskey, countPasskeysHere, relyingParty } from '../mfa/passkeys.js';
import { recordAudit } from '../audit/audit-log.js';
import { notFound } from '../errors/domain-error.js';
import { clearPendingSignIn, pendingSignIn, setPendingSignIn } from '../identity/pending-sign-in.js';
import { codeFailure, passkeyFailure, passwordlessFailure } from '../mfa/second-factor-words.js';
import { passkeyProof, proofFor, type SignInProof } from '../identity/sessions.js';

const NONCE_MAX_AGE_MS = 3600_000;

/**
 * Signing in before there is a session has nothing to bind a CSRF token to, so the page
 * sets a random nonce in an HttpOnly, SameSite=Strict cookie and the form carries its HMAC:
 * another site can neither read the token nor make the browser send the cookie.
 */
const nonceCookie = (deps: DashboardDeps, ctx: Context) => pageCookie(deps, ctx, 'signin', 'strict');

/** The sign-in form's CSRF token, bound to this browser's nonce (set now when it has none). */
export function signInCsrf(deps: DashboardDeps, ctx: Context): string {
  let nonce = nonceCookie(deps, ctx).get();
  if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) {
    nonce = crypto.randomBytes(32).toString('base64url');
    nonceCookie(deps, ctx).set(nonce, NONCE_MAX_AGE_MS);
  }
  return csrfToken(deps.serverKeys, `signin:${nonce}`);
}

/** Verifies a form shown before sign-in (sign-in, forgotten password, invitation) against the nonce cookie. */
export function verifySignInCsrf(deps: DashboardDeps, ctx: Context, form: Record<string, string>): void {
  const nonce = nonceCookie(deps, ctx).get() ?? '';
  verifyCsrf(ctx, deps.serverKeys, `signin:${nonce}`, nonce ? form.csrf : undefined, deps.origin);
}

/** Once signed in (by the sign-in form or an invitation's password form), the nonce has served its purpose. */
export function clearSignInNonce(deps: DashboardDeps, ctx: Context): void {
  nonceCookie(deps, ctx).clear();
}

export interface SignInPageState {
  /** Where the browser goes once signed in (one of our pages). */
  next: string;
  error?: string;
  notice?: string;
  email?: string;
  retryAfterSeconds?: number;
}

/** What the page says it is for: the connections page keeps its own words. */
function purpose(next: string) {
  if (next === CONNECTIONS_PATH || next.startsWith(`${CONNECTIONS_PATH}?`)) {
    return {
      heading: 'Sign in to manage connected applications',
      lead: 'See which applications can act for your nonprofit, and revoke their access.',
      action: CONNECTIONS_SIGN_IN_PATH,
    };
  }
  if (next.startsWith('/invitations/'))
    return { heading: 'Sign in to accept your invitation', lead: 'Use the account the invitation was sent to.', action: SIGN_IN_PATH };
  return { heading: 'Sign in', lead: 'Use your nonprofit staff account.', action: SIGN_IN_PATH };
}

export function showSignIn(deps: DashboardDeps, ctx: Context, state: SignInPageState, status?: number): void {
  if (state.retryAfterSeconds) ctx.set('Retry-After', String(state.retryAfterSeconds));
  const { heading, lead, action } = purpose(state.next);
  sendPage(
    ctx,
    deps.environment,
    'login.njk',
    {
      requestId: ctx.state.requestId,
      heading,
      lead,
      action,
      next: state.next,
      csrf: signInCsrf(deps, ctx),
      error: state.error,
      lockedOut: Boolean(state.retryAfterSeconds),
      notice: state.notice,
      email: state.email ?? '',
      forgotHref: FORGOT_PASSWORD_PATH,
      passkeyForm: passkeyForm(deps, {
        action: SIGN_IN_PASSKEY_PATH,
        optionsAction: SIGN_IN_PASSKEY_OPTIONS_PATH,
        label: 'Sign in with a passkey',
      }),
    },
    { status },
  );
}

/** GET /sign-in: the form, or straight on when already signed in. */
export async function showSignInPage(deps: DashboardDeps, ctx: Context): Promise<void> {
  const next = safeReturnPath(ctx.query.next);
  if (await currentViewer(deps, ctx)) {
    ctx.status = 303;
    ctx.redirect(next);
    return;
  }
  showSignIn(deps, ctx, { next, notice: ctx.query.signed_out === '1' ? 'You are signed out.' : undefined });
}

/**
 * The user proved who they are: the browser session starts (a new one, whatever the cookie
 * named before), bound to the credentials epoch of the proof, and the browser goes where it
 * was going.
 */
async function completeSignIn(deps: DashboardDeps, ctx: Context, proof: SignInProof, next: string): Promise<void> {
  await startSession(deps, ctx, proof);
  clearPendingSignIn(deps, ctx);
  clearSignInNonce(deps, ctx);
  ctx.status = 303;
  ctx.redirect(next);
}

/**
 * POST /sign-in (and /oauth/connections/sign-in, which returns to the connections page): the
 * same sign-in as the authorization flow (throttling, one message for every failure, audit).
 */
export async function submitSignIn(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const next = safeReturnPath(form.next ?? (ctx.path === CONNECTIONS_SIGN_IN_PATH ? CONNECTIONS_PATH : undefined));
  const outcome = await deps.signIn.attempt(
    {
      email: form.email ?? '',
      password: form.password ?? '',
      ip: ctx.state.clientIp ?? '',
      environment: deps.environment,
      requestId: ctx.state.requestId ?? null,
      clientId: null,
    },
    ctx.state.log,
  );
  if (outcome.kind === 'invalid') return showSignIn(deps, ctx, { next, error: SIGN_IN_FAILED, email: form.email }, 401);
  if (outcome.kind === 'locked_out')
    return showSignIn(
      deps,
      ctx,
      { next, error: lockoutMessage(outcome.retryAfterSeconds), email: form.email, retryAfterSeconds: outcome.retryAfterSeconds },
      429,
    );
  await passwordAccepted(deps, ctx, outcome.user, next);
}

/** A right password: signed in now, or (a user with a second factor) once the code is right too. */
async function passwordAccepted(deps: DashboardDeps, ctx: Context, user: User, next: string): Promise<void> {
  if (!(await hasEnrolledSecondFactor(deps.db, user.id))) return completeSignIn(deps, ctx, proofFor(user, ['pwd']), next);
  setPendingSignIn(deps, ctx, user, 'dashboard');
  ctx.status = 303;
  ctx.redirect(`${SECOND_FACTOR_PATH}?next=${encodeURIComponent(next)}`);
}

async function showCodeForm(
  deps: DashboardDeps,
  ctx: Context,
  userId: string,
  next: string,
  error?: string,
  retryAfterSeconds?: number,
  status?: number,
): Promise<void> {
  if (retryAfterSeconds) ctx.set('Retry-After', String(retryAfterSeconds));
  const summary = await secondFactorSummary(deps.db, userId);
  sendPage(
    ctx,
    deps.environment,
    'second-factor.njk',
    {
      requestId: ctx.state.requestId,
      heading: 'Enter your second factor',
      action: SECOND_FACTOR_PATH,
      next,
      csrf: signInCsrf(deps, ctx),
      error,
      cancelHref: SIGN_IN_PATH,
      totp: summary.totp,
      passkeyForm:
        (await countPasskeysHere(deps, userId)) > 0
          ? passkeyForm(deps, {
              action: SIGN_IN_PASSKEY_PATH,
              optionsAction: SIGN_IN_PASSKEY_OPTIONS_PATH,
              label: 'Use a passkey',
              step: 'second-factor',
            })
          : undefined,
    },
    { status },
  );
}

/** GET /sign-in/second-factor: the code form of a sign-in waiting for it (else back to the password). */
export async function showSecondFactorStep(deps: DashboardDeps, ctx: Context): Promise<void> {
  const next = safeReturnPath(ctx.query.next);
  const pending = await pendingSignIn(deps, ctx, 'dashboard');
  if (!pending) {
    ctx.status = 303;
    ctx.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`);
    return;
  }
  await showCodeForm(deps, ctx, pending.userId, next);
}

/** POST /sign-in/second-factor: the code; right, the session starts with amr pwd+otp. */
export async function submitSecondFactorStep(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const next = safeReturnPath(form.next);
  const pending = await pendingSignIn(deps, ctx, 'dashboard');
  if (!pending) {
    ctx.status = 303;
    ctx.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`);
    return;
  }
  const check = await checkSecondFactorCode(deps, pending.userId, form.code ?? '');
  if (!check.ok)
    return showCodeForm(
      deps,
      ctx,
      pending.userId,
      next,
      codeFailure(check.retryAfterSeconds, check.used),
      check.retryAfterSeconds,
      check.retryAfterSeconds ? 429 : 401,
    );
  await completeSignIn(deps, ctx, { userId: pending.userId, epoch: pending.epoch, amr: ['pwd', check.method], at: new Date() }, next);
}

/**
 * POST /sign-in/passkey/options: the options for the browser's WebAuthn call (JSON). With
 * step=second-factor, for the passkeys of the sign-in waiting for its second factor; else
 * for any passkey of this site (a passwordless sign-in).
 */
export async function passkeySignInOptions(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  if (!relyingParty(deps)) throw notFound('Passkeys need the dashboard at a domain name.');
  const userId = form.step === 'second-factor' ? ((await pendingSignIn(deps, ctx, 'dashboard'))?.userId ?? undefined) : null;
  if (userId === undefined) throw notFound('No sign-in is waiting for its second factor.');
  const options = await authenticationOptions(deps, userId);
  await rememberChallenge(deps, ctx, 'authenticate', options.challenge, userId);
  ctx.body = options;
}

/**
 * POST /sign-in/passkey: the passkey's answer. Alone it signs in (amr hwk or swk); after the
 * password it is the second factor (amr pwd and hwk or swk).
 */
export async function submitPasskeySignIn(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const next = safeReturnPath(form.next);
  const pending = form.step === 'second-factor' ? await pendingSignIn(deps, ctx, 'dashboard') : null;
  if (pending === undefined) {
    ctx.status = 303;
    ctx.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`);
    return;
  }
  const challenge = await takeBrowserChallenge(deps, ctx, 'authenticate');
  const check =
    challenge && challenge.user_id === (pending?.userId ?? null)
      ? await checkPasskey(deps, challenge, form.response)
      : { ok: false as const };
  if (pending) {
    if (!check.ok)
      return showCodeForm(
        deps,
        ctx,
        pending.userId,
        next,
        passkeyFailure(check.retryAfterSeconds),
        check.retryAfterSeconds,
        check.retryAfterSeconds ? 429 : 401,
      );
    return completeSignIn(deps, ctx, { userId: pending.userId, epoch: pending.epoch, amr: ['pwd', check.method], at: new Date() }, next);
  }
  const audit = { environment: deps.environment, ip: ctx.state.clientIp || null, requestId: ctx.state.requestId ?? null, clientId: null };
  if (!check.ok) {
    await recordAudit(deps.db, { ...audit, event: 'login.failed', details: { method: 'passkey' } });
    return showSignIn(
      deps,
      ctx,
      { next, error: passwordlessFailure(check.retryAfterSeconds) ?? PASSKEY_SIGN_IN_FAILED, retryAfterSeconds: check.retryAfterSeconds },
      check.retryAfterSeconds ? 429 : 401,
    );
  }
  await recordAudit(deps.db, { ...audit, event: 'login.succeeded', actorUserId: check.userId, details: { method: 'passkey' } });
  // A passkey is its own proof: the epoch is the one current when it was checked.
  await completeSignIn(deps, ctx, await passkeyProof(deps.db, check.userId, check.method), next);
}
