import type { Context } from 'koa';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { ServerKeys } from '../keys/server-keys.js';
import { csrfToken, validToken } from '../http/csrf.js';
import { pageCookie } from '../http/page-cookie.js';
import { credentialsEpoch } from './browser-sessions-repository.js';

/**
 * A sign-in whose password was right and whose second factor is still to come. No session
 * exists yet: the browser holds a short-lived HttpOnly cookie naming the user, signed with
 * the server key and bound to what it is for (the dashboard, or one authorization's
 * interaction), so it can neither be forged nor carried to another sign-in.
 */

const PENDING_SECONDS = 600;

export interface PendingDeps {
  db: Db;
  environment: Environment;
  origin: string;
  serverKeys: ServerKeys;
}

/** What the pending sign-in is for: `dashboard` or `interaction:<uid>`. */
export type PendingPurpose = 'dashboard' | `interaction:${string}`;

const cookie = (deps: PendingDeps, ctx: Context) => pageCookie(deps, ctx, 'pending', 'lax');

/** `epoch`: the user's credentials epoch as read with the password that was just checked. */
export function setPendingSignIn(
  deps: PendingDeps,
  ctx: Context,
  user: { id: string; credentials_epoch: number },
  purpose: PendingPurpose,
): void {
  const expires = Math.floor(Date.now() / 1000) + PENDING_SECONDS;
  const mac = csrfToken(deps.serverKeys, `pending:${user.id}:${user.credentials_epoch}:${expires}:${purpose}`);
  cookie(deps, ctx).set(`${user.id}~${user.credentials_epoch}~${expires}~${mac}`, PENDING_SECONDS * 1000);
}

/** The sign-in waiting for its second factor in this browser for `purpose`: the user and the epoch it was proven under. */
export interface PendingSignIn {
  userId: string;
  epoch: number;
}

/** The sign-in this browser owes a second factor for `purpose`, while the user's credentials are still those it was proven with. */
export async function pendingSignIn(deps: PendingDeps, ctx: Context, purpose: PendingPurpose): Promise<PendingSignIn | undefined> {
  const [userId, epoch, expires, mac, extra] = (cookie(deps, ctx).get() ?? '').split('~');
  if (!userId || !epoch || !expires || !mac || extra !== undefined || !/^\d{1,12}$/.test(expires) || !/^\d{1,9}$/.test(epoch))
    return undefined;
  if (Number(expires) < Date.now() / 1000) return undefined;
  if (!validToken(deps.serverKeys, `pending:${userId}:${epoch}:${expires}:${purpose}`, mac)) return undefined;
  return (await credentialsEpoch(deps.db, userId)) === Number(epoch) ? { userId, epoch: Number(epoch) } : undefined;
}

export function clearPendingSignIn(deps: PendingDeps, ctx: Context): void {
  cookie(deps, ctx).clear();
}
