import type { Executor } from '../db/executor.js';
import type { NewOrganization, OrganizationKind, Role } from '../db/schema.js';

export function insertOrganization(db: Executor, values: NewOrganization) {
  return db.insertInto('organizations').values(values).returningAll().executeTakeFirstOrThrow();
}

export function findOrganizationByEin(db: Executor, ein: string) {
  return db.selectFrom('organizations').selectAll().where('ein', '=', ein).executeTakeFirst();
}

/** An organization of one kind (a fund provider, a nonprofit) by EIN: its id and name. */
export function findOrganizationOfKind(db: Executor, ein: string, kind: OrganizationKind) {
  return db.selectFrom('organizations').select(['id', 'name']).where('ein', '=', ein).where('kind', '=', kind).executeTakeFirst();
}

export function listOrganizations(db: Executor, kind?: OrganizationKind) {
  let query = db.selectFrom('organizations').selectAll().orderBy('name').orderBy('id');
  if (kind) query = query.where('kind', '=', kind);
  return query.execute();
}

export function insertUser(db: Executor, values: { email: string; password_hash: string; display_name?: string | null }) {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

export function findUserByEmail(db: Executor, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function insertMembership(db: Executor, values: { organization_id: string; user_id: string; role: Role }) {
  return db.insertInto('memberships').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateMembershipRole(db: Executor, organizationId: string, userId: string, role: Role) {
  return db
    .updateTable('memberships')
    .set({ role, updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export function deleteMembership(db: Executor, organizationId: string, userId: string) {
  return db
    .deleteFrom('memberships')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export function listMembershipsOfOrganization(db: Executor, organizationId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id as user_id', 'users.email', 'users.display_name', 'memberships.role', 'memberships.created_at'])
    .where('memberships.organization_id', '=', organizationId)
    .orderBy('users.email')
    .execute();
}

/** The nonprofits a user belongs to, with their role in each. */
/**
 * Every organization a user belongs to, nonprofits and fund providers alike: a fund provider's
 * staff connect applications (to the donor-advised-fund APIs) the same way a nonprofit's do.
 */
export function listMemberships(db: Executor, userId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('organizations', 'organizations.id', 'memberships.organization_id')
    .select([
      'organizations.id',
      'organizations.name',
      'organizations.ein',
      'organizations.kind',
      'organizations.require_mfa',
      'memberships.role',
    ])
    .where('memberships.user_id', '=', userId)
    .orderBy('organizations.name')
    .orderBy('organizations.id')
    .execute();
}

/** Who a user is, never the password hash: for findAccount and the hosted pages. */
export function findUserIdentity(db: Executor, id: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'display_name', 'disabled_at', 'credentials_epoch'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Replaces a password hash, only if it is still the one that was verified (a concurrent change wins). */
export function replacePasswordHash(db: Executor, userId: string, previousHash: string, newHash: string) {
  return db
    .updateTable('users')
    .set({ password_hash: newHash, updated_at: new Date() })
    .where('id', '=', userId)
    .where('password_hash', '=', previousHash)
    .execute();
}

/**
 * Locks the organization's row for the rest of the transaction: changes to its memberships are
 * made one at a time, so "is this the last Owner?" cannot be answered by two at once.
 */
export async function lockOrganization(db: Executor, organizationId: string): Promise<boolean> {
  return (await db.selectFrom('organizations').select('id').where('id', '=', organizationId).forUpdate().executeTakeFirst()) !== undefined;
}

/** One membership with the member's address. */
export function findMembership(db: Executor, organizationId: string, userId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id as user_id', 'users.email', 'memberships.role'])
    .where('memberships.organization_id', '=', organizationId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
}

export async function countOwners(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<string>().as('owners'))
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.owners);
}

export function findOrganizationById(db: Executor, id: string) {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export function setOrganizationRequireMfa(db: Executor, id: string, requireMfa: boolean) {
  return db
    .updateTable('organizations')
    .set({ require_mfa: requireMfa, updated_at: new Date() })
    .where('id', '=', id)
    .returning(['id', 'require_mfa'])
    .executeTakeFirst();
}

export function setOrganizationRequireSecondApprover(db: Executor, id: string, required: boolean) {
  return db
    .updateTable('organizations')
    .set({ require_second_approver: required, updated_at: new Date() })
    .where('id', '=', id)
    .returning(['id', 'require_second_approver'])
    .executeTakeFirst();
}

/** How many of an organization's members have no confirmed second factor (an authenticator app or a passkey). */
export async function countMembersWithoutSecondFactor(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships as m')
    .select((eb) => eb.fn.countAll<string>().as('without'))
    .where('m.organization_id', '=', organizationId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('totp_credentials as t')
            .select('t.user_id')
            .whereRef('t.user_id', '=', 'm.user_id')
            .where('t.confirmed_at', 'is not', null),
        ),
      ),
    )
    .where((eb) => eb.not(eb.exists(eb.selectFrom('webauthn_credentials as w').select('w.id').whereRef('w.user_id', '=', 'm.user_id'))))
    .executeTakeFirstOrThrow();
  return Number(row.without);
}
