import type { Db } from '../db/database.js';
import type { Organization, OrganizationKind, Role } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { revokeUserAuthorizationsIn } from '../oidc/authorizations.js';
import { formatEin, parseEin } from './ein.js';
import { conflict, invalid, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, type PasswordParams } from './passwords.js';
import * as repo from './repository.js';
import { inTransaction, type Executor } from '../db/executor.js';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'read_only'];
export const ORGANIZATION_KINDS: readonly OrganizationKind[] = ['nonprofit', 'fund_provider'];

export interface OrganizationView {
  id: string;
  ein: string;
  name: string;
  kind: OrganizationKind;
}

export function organizationView(row: Organization): OrganizationView {
  return { id: row.id, ein: formatEin(row.ein), name: row.name, kind: row.kind };
}

export function normaliseEmail(input: string): string {
  const email = input.trim().toLowerCase();
  if (email.length > 254 || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw invalid(`"${input}" is not an email address`);
  return email;
}

function requireEin(input: string): string {
  const ein = parseEin(input);
  if (!ein) throw invalid(`"${input}" is not an EIN (expected 12-3456789 or 123456789)`);
  return ein;
}

function requireRole(input: string): Role {
  if (!(ROLES as readonly string[]).includes(input)) throw invalid(`role must be one of ${ROLES.join(', ')}`);
  return input as Role;
}

export async function requireOrganization(db: Executor, einInput: string): Promise<Organization> {
  const org = await repo.findOrganizationByEin(db, requireEin(einInput));
  if (!org) throw notFound(`no organization with EIN ${einInput}`);
  return org;
}

async function requireUser(db: Executor, emailInput: string) {
  const user = await repo.findUserByEmail(db, normaliseEmail(emailInput));
  if (!user) throw notFound(`no user with email ${emailInput}`);
  return user;
}

export async function addOrganization(db: Db, input: { ein: string; name: string; kind?: string }): Promise<OrganizationView> {
  const ein = requireEin(input.ein);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) throw invalid('name must be 1 to 200 characters');
  const kind = input.kind ?? 'nonprofit';
  if (!(ORGANIZATION_KINDS as readonly string[]).includes(kind)) throw invalid(`kind must be one of ${ORGANIZATION_KINDS.join(', ')}`);
  return inTransaction(db, async (trx) => {
    const row = await repo
      .insertOrganization(trx, { ein, name, kind: kind as OrganizationKind })
      .catch((error) => mapUniqueViolation(error, { organizations_ein_key: `an organization with EIN ${formatEin(ein)} already exists` }));
    await recordAudit(trx, { event: 'organization.created', organizationId: row.id, details: { ein: formatEin(ein), kind } });
    return organizationView(row);
  });
}

export async function addUser(db: Db, input: { email: string; password: string; displayName?: string }, params: PasswordParams) {
  const email = normaliseEmail(input.email);
  if (input.password.length < MIN_PASSWORD_LENGTH) throw invalid(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (input.password.length > MAX_PASSWORD_LENGTH) throw invalid(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  if (await repo.findUserByEmail(db, email)) throw conflict(`a user with email ${email} already exists`);
  const passwordHash = await hashPassword(input.password, params);
  return inTransaction(db, async (trx) => {
    const row = await repo
      .insertUser(trx, { email, password_hash: passwordHash, display_name: input.displayName ?? null })
      .catch((error) => mapUniqueViolation(error, { users_email_key: `a user with email ${email} already exists` }));
    await recordAudit(trx, { event: 'user.created', actorUserId: row.id, details: { email } });
    return { id: row.id, email: row.email };
  });
}

export interface MembershipView {
  org: string;
  email: string;
  role: Role;
}

export async function addMember(db: Db, input: { org: string; email: string; role: string }): Promise<MembershipView> {
  const role = requireRole(input.role);
  return inTransaction(db, async (trx) => {
    const org = await requireOrganization(trx, input.org);
    const user = await requireUser(trx, input.email);
    await repo
      .insertMembership(trx, { organization_id: org.id, user_id: user.id, role })
      .catch((error) => mapUniqueViolation(error, { memberships_pkey: `${user.email} is already a member of ${formatEin(org.ein)}` }));
    await recordAudit(trx, { event: 'membership.added', organizationId: org.id, actorUserId: user.id, details: { email: user.email, role } });
    return { org: formatEin(org.ein), email: user.email, role };
  });
}

export async function setMemberRole(db: Db, input: { org: string; email: string; role: string }): Promise<MembershipView> {
  const role = requireRole(input.role);
  return inTransaction(db, async (trx) => {
    const org = await requireOrganization(trx, input.org);
    const user = await requireUser(trx, input.email);
    const row = await repo.updateMembershipRole(trx, org.id, user.id, role);
    if (!row) throw notFound(`${user.email} is not a member of ${formatEin(org.ein)}`);
    await recordAudit(trx, { event: 'membership.role_changed', organizationId: org.id, actorUserId: user.id, details: { email: user.email, role } });
    return { org: formatEin(org.ein), email: user.email, role };
  });
}

/** Removes a membership; `revoked_authorizations` counts the user-subject authorizations that ended with it. */
export async function removeMember(db: Db, input: { org: string; email: string }): Promise<Omit<MembershipView, 'role'> & { revoked_authorizations: number }> {
  return inTransaction(db, async (trx) => {
    const org = await requireOrganization(trx, input.org);
    const user = await requireUser(trx, input.email);
    const row = await repo.deleteMembership(trx, org.id, user.id);
    if (!row) throw notFound(`${user.email} is not a member of ${formatEin(org.ein)}`);
    await recordAudit(trx, { event: 'membership.removed', organizationId: org.id, actorUserId: user.id, details: { email: user.email, role: row.role } });
    // What they approved as themselves ends with their membership, in this transaction: an
    // authorization only suspended would come back if they were ever added again.
    const revoked = await revokeUserAuthorizationsIn(trx, { userId: user.id, organizationId: org.id, reason: 'membership_removed' });
    for (const a of revoked) {
      await recordAudit(trx, {
        event: 'authorization.revoked',
        environment: a.environment,
        organizationId: org.id,
        actorUserId: user.id,
        clientId: a.clientId,
        details: { grant_id: a.grantId, subject_type: 'user', reason: 'membership_removed' },
      });
    }
    return { org: formatEin(org.ein), email: user.email, revoked_authorizations: revoked.length };
  });
}
