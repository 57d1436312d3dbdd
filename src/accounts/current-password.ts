import type { Db } from '../db/database.js';
import type { AttemptCounter, AttemptLimit } from '../limits/attempt-counter.js';
import { verifyPassword } from './passwords.js';
import { findPasswordHash } from './user-lifecycle-repository.js';

/**
 * Wrong current passwords per user, on every form that asks for it again (changing the
 * password, removing a second factor, new recovery codes): a stolen session must not become a
 * password-guessing oracle (docs/accounts.md, "Limits"). One budget for all of them.
 */
export const CURRENT_PASSWORD_LIMIT: AttemptLimit = { name: 'current_password_user', max: 5, windowSeconds: 900 };

export type CurrentPasswordCheck = { kind: 'right' } | { kind: 'wrong' } | { kind: 'limited'; retryAfterSeconds: number };

/** Reserved before argon2 runs, so a burst gets no more checks than the limit; a right password gives its attempt back. */
export async function checkCurrentPassword(deps: { db: Db; counter: AttemptCounter }, userId: string, password: string): Promise<CurrentPasswordCheck> {
  const decision = await deps.counter.take(CURRENT_PASSWORD_LIMIT, userId);
  if (!decision.allowed) return { kind: 'limited', retryAfterSeconds: decision.retryAfterSeconds };
  const passwordHash = await findPasswordHash(deps.db, userId);
  if (!passwordHash || password.length > 1024 || !(await verifyPassword(passwordHash, password))) return { kind: 'wrong' };
  await deps.counter.succeeded(decision.taken);
  return { kind: 'right' };
}
