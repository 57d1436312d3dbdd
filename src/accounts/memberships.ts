import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import type { Role } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { revokeUserAuthorizationsIn } from '../authorizations/authorizations.js';
import { countLiveUserAuthorizations } from '../authorizations/repository.js';
import { conflict, forbidden, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { formatEin } from './ein.js';
import * as repo from './repository.js';
import { mayAssignRole } from './role-authority.js';
import { requireOrganization, requireRole, requireUser } from './service.js';

/**
 * An organization's staff list (docs/accounts.md, "Roles"): adding, changing the role of and
 * removing members. The dashboard acts as a signed-in Owner or Admin (`actor`), held to
 * role-authority.ts; the admin CLI acts as the maker (`actor` null). Either way an organization
 * keeps at least one Owner, and each change is made under a lock on the organization's row.
 */
export interface MembershipActor {
  userId: string;
  role: Role;
}

/** Where a change came from, for the audit trail. */
export interface RequestTrace {
  ip?: string | null;
  requestId?: string | null;
}

export interface MembershipView {
  org: string;
  email: string;
  role: Role;
}

const auditTrace = (actor: MembershipActor | null, trace: RequestTrace) => ({
  actorUserId: actor?.userId ?? null,
  ip: trace.ip ?? null,
  requestId: trace.requestId ?? null,
});

/** The membership about to change, after the organization's lock; refused when the actor may not act on it. */
async function lockedMembership(trx: Trx, organizationId: string, userId: string, actor: MembershipActor | null) {
  if (!(await repo.lockOrganization(trx, organizationId))) throw notFound('no such organization');
  const current = await repo.findMembership(trx, organizationId, userId);
  if (!current) throw notFound('there is no such member of this organization');
  if (actor && !mayAssignRole(actor.role, current.role))
    throw forbidden(`an ${actor.role === 'admin' ? 'Admin' : actor.role} cannot change or remove an Owner`);
  return current;
}

async function refuseLastOwner(trx: Trx, organizationId: string, current: { email: string; role: Role }, what: string): Promise<void> {
  if (current.role === 'owner' && (await repo.countOwners(trx, organizationId)) <= 1) {
    throw conflict(`${current.email} is the organization's only Owner and cannot be ${what}: make another member Owner first`);
  }
}

/** An organization's staff, by address, with each member's role and since when. */
export function membersOf(db: Db, organizationId: string) {
  return repo.listMembershipsOfOrganization(db, organizationId);
}

/**
 * Whether `actor` may remove a member, before asking to confirm it (docs/accounts.md, "Roles"):
 * absent, refused (an Admin and an Owner), the only Owner, or allowed with the number of live
 * authorizations the removal ends. removeMembership decides again, under the lock.
 */
export async function removalOutlook(
  db: Db,
  organizationId: string,
  userId: string,
  actor: Role,
): Promise<
  | { kind: 'absent' }
  | { kind: 'refused'; member: { email: string; role: Role } }
  | { kind: 'only_owner'; member: { email: string; role: Role } }
  | { kind: 'allowed'; member: { email: string; role: Role }; authorizations: number }
> {
  const member = await repo.findMembership(db, organizationId, userId);
  if (!member) return { kind: 'absent' };
  if (!mayAssignRole(actor, member.role)) return { kind: 'refused', member };
  if (member.role === 'owner' && (await repo.countOwners(db, organizationId)) <= 1) return { kind: 'only_owner', member };
  return { kind: 'allowed', member, authorizations: await countLiveUserAuthorizations(db, { userId, organizationId }) };
}

export async function addMember(db: Db, input: { org: string; email: string; role: string }): Promise<MembershipView> {
  const role = requireRole(input.role);
  return inTransaction(db, async (trx) => {
    const org = await requireOrganization(trx, input.org);
    const user = await requireUser(trx, input.email);
    await repo
      .insertMembership(trx, { organization_id: org.id, user_id: user.id, role })
      .catch((error) => mapUniqueViolation(error, { memberships_pkey: `${user.email} is already a member of ${formatEin(org.ein)}` }));
    await recordAudit(trx, { event: 'membership.added', organizationId: org.id, details: { user_id: user.id, email: user.email, role } });
    return { org: formatEin(org.ein), email: user.email, role };
  });
}

/** Gives a member another role. */
export async function changeMemberRole(
  db: Db,
  q: { organizationId: string; userId: string; role: string; actor: MembershipActor | null } & RequestTrace,
): Promise<{ email: string; role: Role; previousRole: Role }> {
  const role = requireRole(q.role);
  return inTransaction(db, async (trx) => {
    const current = await lockedMembership(trx, q.organizationId, q.userId, q.actor);
    if (q.actor && !mayAssignRole(q.actor.role, role)) throw forbidden('only an Owner can make someone Owner');
    if (role !== 'owner') await refuseLastOwner(trx, q.organizationId, current, 'given another role');
    if (current.role !== role) {
      await repo.updateMembershipRole(trx, q.organizationId, q.userId, role);
      await recordAudit(trx, {
        event: 'membership.role_changed',
        organizationId: q.organizationId,
        ...auditTrace(q.actor, q),
        details: { user_id: q.userId, email: current.email, role, previous_role: current.role },
      });
    }
    return { email: current.email, role, previousRole: current.role };
  });
}

/**
 * Removes a member. What they approved as themselves ends with their membership, in the same
 * transaction (an authorization only suspended would come back if they were ever added again);
 * `revokedAuthorizations` counts those user-subject authorizations.
 */
export async function removeMembership(
  db: Db,
  q: { organizationId: string; userId: string; actor: MembershipActor | null } & RequestTrace,
): Promise<{ email: string; revokedAuthorizations: number }> {
  return inTransaction(db, async (trx) => {
    const current = await lockedMembership(trx, q.organizationId, q.userId, q.actor);
    await refuseLastOwner(trx, q.organizationId, current, 'removed');
    await repo.deleteMembership(trx, q.organizationId, q.userId);
    const trace = auditTrace(q.actor, q);
    await recordAudit(trx, {
      event: 'membership.removed',
      organizationId: q.organizationId,
      ...trace,
      details: { user_id: q.userId, email: current.email, role: current.role },
    });
    const revoked = await revokeUserAuthorizationsIn(trx, {
      userId: q.userId,
      organizationId: q.organizationId,
      reason: 'membership_removed',
    });
    for (const a of revoked) {
      await recordAudit(trx, {
        event: 'authorization.revoked',
        environment: a.environment,
        organizationId: q.organizationId,
        ...trace,
        clientId: a.clientId,
        details: { grant_id: a.grantId, subject_type: 'user', user_id: q.userId, reason: 'membership_removed' },
      });
    }
    return { email: current.email, revokedAuthorizations: revoked.length };
  });
}

/** The member an admin CLI command names, by EIN and address. */
async function namedMembership(db: Db, input: { org: string; email: string }) {
  const org = await requireOrganization(db, input.org);
  const user = await requireUser(db, input.email);
  if (!(await repo.findMembership(db, org.id, user.id))) throw notFound(`${user.email} is not a member of ${formatEin(org.ein)}`);
  return { org, user };
}

/** The admin CLI's `members set-role`, as the maker. */
export async function setMemberRole(db: Db, input: { org: string; email: string; role: string }): Promise<MembershipView> {
  const { org, user } = await namedMembership(db, input);
  const changed = await changeMemberRole(db, { organizationId: org.id, userId: user.id, role: input.role, actor: null });
  return { org: formatEin(org.ein), email: changed.email, role: changed.role };
}

/** The admin CLI's `members remove`, as the maker. */
export async function removeMember(
  db: Db,
  input: { org: string; email: string },
): Promise<Omit<MembershipView, 'role'> & { revoked_authorizations: number }> {
  const { org, user } = await namedMembership(db, input);
  const removed = await removeMembership(db, { organizationId: org.id, userId: user.id, actor: null });
  return { org: formatEin(org.ein), email: removed.email, revoked_authorizations: removed.revokedAuthorizations };
}
