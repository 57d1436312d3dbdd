import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { inTransaction } from '../db/executor.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import { applyNewPassword } from './password-lifecycle.js';
import { passwordProblem } from './password-policy.js';
import { hashPassword, type PasswordParams } from './passwords.js';
import { checkCurrentPassword } from './current-password.js';

export type PasswordChangeOutcome =
  | { kind: 'done'; sessionsEnded: number }
  | { kind: 'wrong_current' }
  | { kind: 'limited'; retryAfterSeconds: number }
  | { kind: 'refused'; problem: string };

/**
 * A signed-in user changes their own password: the current one checked (throttled), the new
 * one twice and the policy, then the new hash applied, which ends every other session of the
 * user in both environments and keeps `session`, the one the change was made in.
 */
export async function changeOwnPassword(
  deps: { db: Db; counter: AttemptCounter; passwordParams: PasswordParams },
  q: {
    userId: string;
    email: string;
    current: string;
    password: string;
    confirmation: string;
    session: { environment: Environment; uid: string };
    signOutApplications?: boolean;
  },
  trace: { ip?: string | null; requestId?: string | null },
): Promise<PasswordChangeOutcome> {
  const current = await checkCurrentPassword(deps, q.userId, q.current);
  if (current.kind === 'limited') return current;
  if (current.kind === 'wrong') return { kind: 'wrong_current' };
  if (q.password !== q.confirmation) return { kind: 'refused', problem: 'The two new passwords differ; type the same new password twice.' };
  const problem = passwordProblem(q.password, q.email);
  if (problem) return { kind: 'refused', problem };
  if (q.password === q.current) return { kind: 'refused', problem: 'Choose a new password that differs from your current one.' };
  const newHash = await hashPassword(q.password, deps.passwordParams);
  const sessionsEnded = await inTransaction(deps.db, (trx) =>
    applyNewPassword(
      trx,
      {
        userId: q.userId,
        email: q.email,
        passwordHash: newHash,
        keep: q.session,
        signOutApplications: q.signOutApplications,
        event: 'user.password_changed',
        via: 'account_page',
      },
      { actorUserId: q.userId, environment: q.session.environment, ...trace },
    ),
  );
  return { kind: 'done', sessionsEnded };
}
