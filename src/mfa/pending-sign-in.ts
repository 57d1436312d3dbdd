import type { Context } from 'koa';
import type { Environment } from '../db/schema.js';
import type { ServerKeys } from '../keys/server-keys.js';
import { csrfToken, validToken } from '../http/csrf.js';
import { pageCookie } from '../http/page-cookie.js';

/**
 * A sign-in whose password was right and whose second factor is still to come. No session
 * exists yet: the browser holds a short-lived HttpOnly cookie naming the user, signed with
 * the server key and bound to what it is for (the dashboard, or one authorization's
 * interaction), so it can neither be forged nor carried to another sign-in.
 */

const PENDING_SECONDS = 600;

export interface PendingDeps {
  environment: Environment;
  origin: string;
  serverKeys: ServerKeys;
}

/** What the pending sign-in is for: `dashboard` or `interaction:<uid>`. */
export type PendingPurpose = 'dashboard' | `interaction:${string}`;

const cookie = (deps: PendingDeps, ctx: Context) => pageCookie(deps, ctx, 'pending', 'lax');

export function setPendingSignIn(deps: PendingDeps, ctx: Context, userId: string, purpose: PendingPurpose): void {
  const expires = Math.floor(Date.now() / 1000) + PENDING_SECONDS;
  const mac = csrfToken(deps.serverKeys, `pending:${userId}:${expires}:${purpose}`);
  cookie(deps, ctx).set(`${userId}~${expires}~${mac}`, PENDING_SECONDS * 1000);
}

/** The user whose second factor this browser owes for `purpose`, or undefined. */
export function pendingSignIn(deps: PendingDeps, ctx: Context, purpose: PendingPurpose): string | undefined {
  const [userId, expires, mac, extra] = (cookie(deps, ctx).get() ?? '').split('~');
  if (!userId || !expires || !mac || extra !== undefined || !/^\d{1,12}$/.test(expires)) return undefined;
  if (Number(expires) < Date.now() / 1000) return undefined;
  return validToken(deps.serverKeys, `pending:${userId}:${expires}:${purpose}`, mac) ? userId : undefined;
}

export function clearPendingSignIn(deps: PendingDeps, ctx: Context): void {
  cookie(deps, ctx).clear();
}
