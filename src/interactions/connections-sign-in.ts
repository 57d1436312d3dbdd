import crypto from 'node:crypto';
import type { Context } from 'koa';
import { readForm } from '../http/form-body.js';
import { sendPage } from '../views/page.js';
import { csrfToken, verifyCsrf } from './csrf.js';
import type { InteractionDeps } from './interaction.js';
import { startSession } from './provider-session.js';
import { lockoutMessage, SIGN_IN_FAILED } from './sign-in-messages.js';

export const SIGN_IN_PATH = '/oauth/connections/sign-in';
const NONCE_MAX_AGE_MS = 3600_000;

function nonceCookie(deps: InteractionDeps): string {
  return `alm_${deps.environment}_signin`;
}

/**
 * Signing in before there is a session has nothing to bind a CSRF token to, so the page
 * sets a random nonce in an HttpOnly, SameSite=Strict cookie and the form carries its HMAC:
 * another site can neither read the token nor make the browser send the cookie.
 */
function nonceCookieOptions(deps: InteractionDeps) {
  return { httpOnly: true, sameSite: 'strict' as const, secure: deps.origin.startsWith('https:'), path: '/oauth/connections', overwrite: true };
}

function cookies(deps: InteractionDeps, ctx: Context) {
  ctx.cookies.secure = deps.origin.startsWith('https:');
  return ctx.cookies;
}

export interface SignInPageState {
  error?: string;
  notice?: string;
  email?: string;
  retryAfterSeconds?: number;
}

export function showConnectionsSignIn(deps: InteractionDeps, ctx: Context, state: SignInPageState = {}, status?: number): void {
  let nonce = cookies(deps, ctx).get(nonceCookie(deps));
  if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) {
    nonce = crypto.randomBytes(32).toString('base64url');
    cookies(deps, ctx).set(nonceCookie(deps), nonce, { ...nonceCookieOptions(deps), maxAge: NONCE_MAX_AGE_MS });
  }
  if (state.retryAfterSeconds) ctx.set('Retry-After', String(state.retryAfterSeconds));
  sendPage(ctx, deps.environment, 'login.njk', {
    requestId: ctx.state.requestId,
    heading: 'Sign in to manage connected applications',
    lead: 'See which applications can act for your nonprofit, and revoke their access.',
    action: SIGN_IN_PATH,
    csrf: csrfToken(deps.serverKeys, `signin:${nonce}`),
    error: state.error,
    lockedOut: Boolean(state.retryAfterSeconds),
    notice: state.notice,
    email: state.email ?? '',
  }, { status });
}

/** POST /oauth/connections/sign-in: the same sign-in (throttling, audit) as the authorization flow. */
export async function submitConnectionsSignIn(deps: InteractionDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const nonce = cookies(deps, ctx).get(nonceCookie(deps)) ?? '';
  verifyCsrf(ctx, deps.serverKeys, `signin:${nonce}`, nonce ? form.csrf : undefined, deps.origin);
  const outcome = await deps.signIn.attempt(
    { email: form.email ?? '', password: form.password ?? '', ip: ctx.state.clientIp ?? '', environment: deps.environment, requestId: ctx.state.requestId ?? null, clientId: null },
    ctx.state.log,
  );
  if (outcome.kind === 'invalid') return showConnectionsSignIn(deps, ctx, { error: SIGN_IN_FAILED, email: form.email }, 401);
  if (outcome.kind === 'locked_out') return showConnectionsSignIn(deps, ctx, { error: lockoutMessage(outcome.retryAfterSeconds), email: form.email, retryAfterSeconds: outcome.retryAfterSeconds }, 429);
  await startSession(deps, ctx, outcome.user.id);
  cookies(deps, ctx).set(nonceCookie(deps), null, nonceCookieOptions(deps));
  ctx.status = 303;
  ctx.redirect('/oauth/connections');
}
