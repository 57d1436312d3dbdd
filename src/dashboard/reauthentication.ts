import { checkCurrentPassword } from '../accounts/current-password.js';
import { rateLimited } from '../errors/domain-error.js';
import type { DashboardDeps } from './deps.js';
import type { Viewer } from './viewer.js';

/**
 * The signed-in user types the password again before a change that weakens the account
 * (removing a second factor, new recovery codes): a session left open on a shared computer is
 * not enough. Past the limit of wrong passwords, 429.
 */
export async function passwordConfirmed(deps: DashboardDeps, viewer: Viewer, password: string): Promise<boolean> {
  const check = await checkCurrentPassword(deps, viewer.user.id, password);
  if (check.kind === 'limited')
    throw rateLimited(
      `Too many wrong passwords. Try again in ${Math.ceil(check.retryAfterSeconds / 60)} minutes.`,
      check.retryAfterSeconds,
    );
  return check.kind === 'right';
}
