import type { Environment } from '../db/schema.js';
import type { Executor } from '../db/executor.js';
import { recordAudit } from '../audit/audit-log.js';
import { endApplicationTokensOfUser } from '../authorizations/authorizations.js';
import { endUserSignIns } from '../authorizations/sessions-repository.js';
import { consumeAllPasswordResets } from './password-resets-repository.js';
import { setPasswordHash } from './user-lifecycle-repository.js';

/** Where a password change came from, for the audit trail. */
export interface PasswordTrace {
  /** Who acted: the user themselves, or null for the maker's CLI. */
  actorUserId: string | null;
  environment?: Environment | null;
  ip?: string | null;
  requestId?: string | null;
}

/**
 * A user's new password takes effect (docs/accounts.md, "Password reset", "Changing your
 * password"), inside the caller's transaction: the new argon2id hash, password_changed_at,
 * every open reset link consumed, and the browser sessions and sign-ins in progress ended in
 * both environments (all of them, or all but `keep`, the session a change was made in), with
 * one audit event. With `signOutApplications`, the applications the user connected as
 * themselves lose their tokens too (authorizations.ts, endApplicationTokensOfUser). Returns how
 * many sessions ended.
 */
export async function applyNewPassword(
  trx: Executor,
  q: {
    userId: string;
    email: string;
    passwordHash: string;
    keep?: { environment: Environment; uid: string };
    signOutApplications?: boolean;
    event: 'user.password_reset' | 'user.password_changed';
    via: 'link' | 'cli' | 'account_page';
  },
  trace: PasswordTrace,
): Promise<number> {
  await setPasswordHash(trx, q.userId, q.passwordHash);
  await consumeAllPasswordResets(trx, q.userId);
  const sessionsEnded = await endUserSignIns(trx, q.userId, q.keep);
  const applications = q.signOutApplications ? await endApplicationTokensOfUser(trx, q.userId) : undefined;
  await recordAudit(trx, {
    event: q.event,
    environment: trace.environment ?? null,
    actorUserId: trace.actorUserId,
    ip: trace.ip ?? null,
    requestId: trace.requestId ?? null,
    details: {
      user_id: q.userId,
      email: q.email,
      via: q.via,
      sessions_ended: sessionsEnded,
      ...(applications === undefined ? {} : { applications_signed_out: applications }),
    },
  });
  return sessionsEnded;
}
