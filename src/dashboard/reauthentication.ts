import { findUserByEmail } from '../accounts/repository.js';
import { verifyPassword } from '../accounts/passwords.js';
import { rateLimited } from '../errors/domain-error.js';
import type { AttemptLimit } from '../limits/attempt-counter.js';
import type { DashboardDeps } from './deps.js';
import type { Viewer } from './viewer.js';

/** Wrong passwords per user per 15 minutes on forms that ask for it again (removing a second factor). */
export const REAUTHENTICATION_LIMIT: AttemptLimit = { name: 'reauthenticate_user', max: 5, windowSeconds: 900 };

/**
 * The signed-in user types the password again before a change that weakens the account: a
 * session left open on a shared computer is not enough. Counted before the (slow) check, so
 * a burst gets no more guesses than the limit; 429 beyond it.
 */
export async function passwordConfirmed(deps: DashboardDeps, viewer: Viewer, password: string): Promise<boolean> {
  const attempt = await deps.counter.take(REAUTHENTICATION_LIMIT, viewer.user.id);
  if (!attempt.allowed) throw rateLimited(`Too many wrong passwords. Try again in ${Math.ceil(attempt.retryAfterSeconds / 60)} minutes.`, attempt.retryAfterSeconds);
  const user = await findUserByEmail(deps.db, viewer.user.email);
  const ok = Boolean(user && password && password.length <= 1024 && (await verifyPassword(user.password_hash, password)));
  if (ok) await deps.counter.succeeded(attempt.taken);
  return ok;
}
