import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import { resetRequestsPerCallerAddress, resetRequestsPerEmail } from '../limits/rate-limits.js';
import type { Logger } from '../logging/logger.js';
import { renderMail } from '../mail/render.js';
import type { MailSender } from '../mail/sender.js';
import { canonicalEmail, hasUnsafeCharacters, UNSAFE_EMAIL } from './email-address.js';
import { applyNewPassword, type PasswordTrace } from './password-lifecycle.js';
import { consumePasswordReset, findPasswordReset, insertPasswordReset } from './password-resets-repository.js';
import { hashPassword, type PasswordParams } from './passwords.js';
import { passwordProblem } from './password-policy.js';
import * as repo from './repository.js';

/**
 * Password reset by e-mailed link (docs/accounts.md, "Password reset"; docs/security.md,
 * "Password reset"). The link's token is 32 random bytes (base64url), kept only as its
 * SHA-256: the database lookup is by that hash, so how long a lookup takes says nothing about
 * the token. A link lasts 30 minutes and works once; every open link of a user ends when the
 * password changes.
 */
export const RESET_LIFETIME_MINUTES = 30;

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newResetToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function resetTokenHash(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** Loose on purpose: anything with an @ between two non-empty parts is looked up (what was typed decides nothing visible). */
const EMAIL_SHAPE = /^[^@\s]+@[^@\s]+$/;

/**
 * The address typed on the forgot-password form, in the spelling accounts are stored in
 * (canonicalEmail: NFC, trimmed, lower case), or the problem the form shows: not an address at
 * all, or one with control or invisible formatting characters, which no account has.
 */
export function resetRequestAddress(input: string): { email: string; problem?: undefined } | { email?: undefined; problem: string } {
  const email = canonicalEmail(input);
  if (hasUnsafeCharacters(email)) return { problem: UNSAFE_EMAIL };
  if (!EMAIL_SHAPE.test(email) || email.length > 254) return { problem: 'Enter the e-mail address you sign in with.' };
  return { email };
}

export interface ResetRequest {
  /** What was typed, already normalised (resetRequestAddress). */
  email: string;
  ip: string;
  /** The dashboard the link points at, and its name for the message. */
  dashboardOrigin: string;
  environmentName: string;
}

export type ResetRequestOutcome = 'sent' | 'limited' | 'no_account';

/**
 * What a reset request does, run after the page has answered (so its answer and timing are
 * the same for every address): one attempt reserved under each limit before anything is
 * looked up (over either, nothing is sent), then, for an active account only, a new link and
 * its mail. The outcome is for tests and the log; the person asking never sees it.
 */
export async function processResetRequest(
  deps: { db: Db; mail: MailSender; counter: AttemptCounter },
  request: ResetRequest,
  log?: Logger,
): Promise<ResetRequestOutcome> {
  const decision = await deps.counter.takeAll([
    { limit: resetRequestsPerEmail, value: request.email },
    { limit: resetRequestsPerCallerAddress, value: request.ip },
  ]);
  if (!decision.allowed) {
    log?.info({ retry_after_seconds: decision.retryAfterSeconds }, 'password reset request over its limit: no mail sent');
    return 'limited';
  }
  const user = await repo.findUserByEmail(deps.db, request.email);
  if (!user || user.disabled_at) return 'no_account';
  const token = newResetToken();
  await insertPasswordReset(deps.db, { tokenHash: resetTokenHash(token), userId: user.id, lifetimeSeconds: RESET_LIFETIME_MINUTES * 60 });
  await deps.mail.send({
    to: user.email,
    ...renderMail('password-reset', {
      resetUrl: `${request.dashboardOrigin}/reset-password/${token}`,
      environmentName: request.environmentName,
      expiresMinutes: RESET_LIFETIME_MINUTES,
    }),
  });
  return 'sent';
}

/** A link as its page sees it: usable (with whose account), or why not. */
export type ResetLink = { state: 'usable'; userId: string; email: string } | { state: 'unknown' } | { state: 'spent' };

/** `spent`: used, expired, or its account disabled since; `unknown`: no such link (or not a token at all). */
export async function inspectResetLink(db: Db, token: string): Promise<ResetLink> {
  if (!TOKEN_PATTERN.test(token)) return { state: 'unknown' };
  const row = await findPasswordReset(db, resetTokenHash(token));
  if (!row) return { state: 'unknown' };
  if (row.used_at || row.expired || row.disabled_at) return { state: 'spent' };
  return { state: 'usable', userId: row.user_id, email: row.email };
}

export type ResetOutcome =
  | { kind: 'done'; userId: string; email: string; sessionsEnded: number }
  | { kind: 'refused'; problem: string }
  | { kind: 'spent' }
  | { kind: 'unknown' };

/**
 * Sets the new password through a link: the policy (with the account's address), argon2id,
 * then in one transaction the link is consumed (the conditional UPDATE decides between
 * concurrent submissions: one wins, the others are `spent`) and the password applied, which
 * ends every session of the user in both environments.
 */
export async function resetPasswordWithLink(
  db: Db,
  params: PasswordParams,
  q: { token: string; password: string; confirmation: string; signOutApplications?: boolean },
  trace: Omit<PasswordTrace, 'actorUserId'>,
): Promise<ResetOutcome> {
  const link = await inspectResetLink(db, q.token);
  if (link.state !== 'usable') return { kind: link.state };
  if (q.password !== q.confirmation) return { kind: 'refused', problem: 'The two passwords differ; type the same new password twice.' };
  const problem = passwordProblem(q.password, link.email);
  if (problem) return { kind: 'refused', problem };
  const passwordHash = await hashPassword(q.password, params);
  return inTransaction(db, async (trx): Promise<ResetOutcome> => {
    const userId = await consumePasswordReset(trx, resetTokenHash(q.token));
    if (!userId) return { kind: 'spent' };
    const sessionsEnded = await applyNewPassword(
      trx,
      { userId, email: link.email, passwordHash, signOutApplications: q.signOutApplications, event: 'user.password_reset', via: 'link' },
      { ...trace, actorUserId: userId },
    );
    return { kind: 'done', userId, email: link.email, sessionsEnded };
  });
}
