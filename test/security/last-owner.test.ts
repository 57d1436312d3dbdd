/**
 * Attack: take an organization away from its owners by leaving it without an Owner: an Admin
 * demoting or removing the last Owner, or two Owners demoting each other at the same moment so
 * that each sees the other still in place.
 * Protection: an Admin can neither give nor take the Owner role (403); every membership change
 * locks the organization's row before counting its Owners, so concurrent changes are decided one
 * after the other and the last Owner's demotion or removal is refused (409) whoever asks.
 */
import { describe, expect, it } from 'vitest';
import { addMember, changeMemberRole, removeMembership, setMemberRole } from '../../src/accounts/memberships.js';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { createTestDatabase } from '../helpers/database.js';
import { afterAll, beforeAll } from 'vitest';
import type { TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

let orgs = 0;
async function organizationWithOwners(count: number) {
  orgs += 1;
  const ein = `55-10000${String(orgs).padStart(2, '0')}`;
  const org = await addOrganization(t.db, { ein, name: `Owners ${orgs}` });
  const owners = [];
  for (let i = 0; i < count; i += 1) {
    const user = await addUser(t.db, { email: `owner${i}-${orgs}@example.org`, password: 'owner-password-1' }, MIN_PASSWORD_PARAMS);
    await addMember(t.db, { org: ein, email: user.email, role: 'owner' });
    owners.push(user);
  }
  const admin = await addUser(t.db, { email: `admin-${orgs}@example.org`, password: 'admin-password-1' }, MIN_PASSWORD_PARAMS);
  await addMember(t.db, { org: ein, email: admin.email, role: 'admin' });
  return { ein, org, owners, admin };
}

const owners = async (organizationId: string) =>
  (
    await t.db
      .selectFrom('memberships')
      .select('user_id')
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'owner')
      .execute()
  ).length;
const code = (error: unknown) => (error instanceof DomainError ? error.code : String(error));

describe('an organization keeps an Owner', () => {
  it('refuses an Admin who demotes or removes the last Owner (403), and the maker too (409)', async () => {
    const {
      ein,
      org,
      owners: [owner],
      admin,
    } = await organizationWithOwners(1);
    const actor = { userId: admin.id, role: 'admin' as const };
    await expect(changeMemberRole(t.db, { organizationId: org.id, userId: owner!.id, role: 'member', actor }).catch(code)).resolves.toBe(
      'forbidden',
    );
    await expect(removeMembership(t.db, { organizationId: org.id, userId: owner!.id, actor }).catch(code)).resolves.toBe('forbidden');
    await expect(setMemberRole(t.db, { org: ein, email: owner!.email, role: 'admin' }).catch(code)).resolves.toBe('conflict');
    expect(await owners(org.id)).toBe(1);
  });

  it('decides two Owners demoting each other at once one after the other: one stays Owner', async () => {
    for (let round = 0; round < 5; round += 1) {
      const {
        org,
        owners: [a, b],
      } = await organizationWithOwners(2);
      const results = await Promise.allSettled([
        changeMemberRole(t.db, { organizationId: org.id, userId: b!.id, role: 'admin', actor: { userId: a!.id, role: 'owner' } }),
        changeMemberRole(t.db, { organizationId: org.id, userId: a!.id, role: 'admin', actor: { userId: b!.id, role: 'owner' } }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected').map((r) => code((r as PromiseRejectedResult).reason))).toEqual(['conflict']);
      expect(await owners(org.id)).toBe(1);
    }
  });

  it('decides concurrent removals of every Owner the same way', async () => {
    const { org, owners: list } = await organizationWithOwners(4);
    const results = await Promise.allSettled(
      list.map((o) => removeMembership(t.db, { organizationId: org.id, userId: o.id, actor: null })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await owners(org.id)).toBe(1);
  });
});
