import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { recordAudit } from '../audit/audit-log.js';
import { conflict } from '../errors/domain-error.js';
import { revokeAuthorizationIn } from '../authorizations/authorizations.js';
import { lockLiveAuthorizationsOfUser } from '../authorizations/repository.js';
import { endUserSignIns } from '../authorizations/sessions-repository.js';
import { applyNewPassword } from './password-lifecycle.js';
import { requireAcceptablePassword } from './password-policy.js';
import { hashPassword, type PasswordParams } from './passwords.js';
import { normaliseEmail, requireUser } from './service.js';
import { listUsersWithMembershipCounts, markUserDisabled, markUserEnabled } from './user-lifecycle-repository.js';

/**
 * The maker's account commands (docs/operations.md, "Admin CLI"; docs/accounts.md,
 * "Disabled accounts"): listing users, disabling and enabling them, and setting a password.
 * They act as nobody (the audit rows have no actor) and apply to both environments.
 */

export interface UserListing {
  id: string;
  email: string;
  name: string | null;
  status: 'active' | 'disabled';
  created_at: string;
  organizations: number;
}

export async function listUsers(db: Db): Promise<UserListing[]> {
  const rows = await listUsersWithMembershipCounts(db);
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.display_name,
    status: r.disabled_at ? 'disabled' : 'active',
    created_at: r.created_at.toISOString(),
    organizations: Number(r.organizations ?? 0),
  }));
}

/**
 * Disables an account at once and for good until enabled again: it can no longer sign in
 * (sign-in refuses it with the same message as a wrong password), its browser sessions end
 * in both environments, and every user-subject authorization it approved is revoked with its
 * tokens (an enabled account starts from nothing). Organization-subject authorizations belong
 * to their organization and stay. One transaction; audited.
 */
export async function disableUser(
  db: Db,
  emailInput: string,
): Promise<{ email: string; sessions_ended: number; revoked_authorizations: number }> {
  return inTransaction(db, async (trx) => {
    const user = await requireUser(trx, emailInput);
    const locked = await markUserDisabled(trx, user.id);
    if (!locked) throw conflict(`${user.email} is already disabled`);
    const sessionsEnded = await endUserSignIns(trx, user.id);
    const authorizations = await lockLiveAuthorizationsOfUser(trx, user.id);
    let revoked = 0;
    for (const a of authorizations) {
      if (!(await revokeAuthorizationIn(trx, a.environment, a.grant_id, 'user_disabled'))) continue;
      revoked += 1;
      await recordAudit(trx, {
        event: 'authorization.revoked',
        environment: a.environment,
        organizationId: a.organization_id,
        clientId: a.client_id,
        details: { grant_id: a.grant_id, subject_type: 'user', user_id: user.id, reason: 'user_disabled' },
      });
    }
    await recordAudit(trx, {
      event: 'user.disabled',
      details: { user_id: user.id, email: user.email, sessions_ended: sessionsEnded, revoked_authorizations: revoked },
    });
    return { email: user.email, sessions_ended: sessionsEnded, revoked_authorizations: revoked };
  });
}

/** Lets a disabled account sign in again (what disabling revoked stays revoked). */
export async function enableUser(db: Db, emailInput: string): Promise<{ email: string }> {
  return inTransaction(db, async (trx) => {
    const user = await requireUser(trx, emailInput);
    const changed = await markUserEnabled(trx, user.id);
    if (!changed) throw conflict(`${user.email} is not disabled`);
    await recordAudit(trx, { event: 'user.enabled', details: { user_id: user.id, email: user.email } });
    return { email: user.email };
  });
}

/**
 * The maker sets a user's password (the same policy as every new password); like a reset by
 * link, every session of the user ends and every open reset link is used up.
 */
export async function setPasswordAsMaker(
  db: Db,
  params: PasswordParams,
  input: { email: string; password: string },
): Promise<{ id: string; email: string; sessions_ended: number }> {
  const email = normaliseEmail(input.email);
  requireAcceptablePassword(input.password, email);
  const user = await requireUser(db, email);
  const passwordHash = await hashPassword(input.password, params);
  const sessionsEnded = await inTransaction(db, (trx) =>
    applyNewPassword(
      trx,
      { userId: user.id, email: user.email, passwordHash, event: 'user.password_reset', via: 'cli' },
      { actorUserId: null },
    ),
  );
  return { id: user.id, email: user.email, sessions_ended: sessionsEnded };
}
