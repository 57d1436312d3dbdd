import { findUserIdentity, listMemberships } from '../accounts/repository.js';
import type { Executor } from '../db/executor.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * The signed-in user as a browser request of the authorization flow sees them: from the
 * request's first read when its unit found them (unit-of-work.ts), else read now. Either way
 * read during this request, never carried over from an earlier one: a user disabled or
 * removed from an organization since the last page is seen as such.
 */
export async function userIdentity(db: Executor, userId: string, unit: UnitOfWork | undefined) {
  return unit?.accounts.get(userId)?.identity ?? (await findUserIdentity(db, userId));
}

/** The organizations a user belongs to, with their role in each, ordered by name. */
export async function userMemberships(db: Executor, userId: string, unit: UnitOfWork | undefined) {
  return unit?.accounts.get(userId)?.memberships ?? (await listMemberships(db, userId));
}
