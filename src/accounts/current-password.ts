import type { Db } from '../db/database.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import { currentPasswordFailures } from '../limits/rate-limits.js';
import { verifyPassword } from './passwords.js';
import { findPasswordHash } from './user-lifecycle-repository.js';

export type CurrentPasswordCheck = { kind: 'right' } | { kind: 'wrong' } | { kind: 'limited'; retryAfterSeconds: number };

/** Reserved before argon2 runs, so a burst gets no more checks than the limit; a right password gives its attempt back. */
export async function checkCurrentPassword(
  deps: { db: Db; counter: AttemptCounter },
  userId: string,
  password: string,
): Promise<CurrentPasswordCheck> {
  const decision = await deps.counter.take(currentPasswordFailures, userId);
  if (!decision.allowed) return { kind: 'limited', retryAfterSeconds: decision.retryAfterSeconds };
  const passwordHash = await findPasswordHash(deps.db, userId);
  if (!passwordHash || password.length > 1024 || !(await verifyPassword(passwordHash, password))) return { kind: 'wrong' };
  await deps.counter.succeeded(decision.taken);
  return { kind: 'right' };
}
