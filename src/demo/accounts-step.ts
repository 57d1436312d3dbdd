import type { Executor } from '../db/executor.js';
import type { OrganizationKind, Role } from '../db/schema.js';
import { hashPassword } from '../accounts/passwords.js';
import type { SeedContext, SeedStep } from './seed.js';
import { ensureMembership, findOrganizationIdByEin, findUserIdByEmail, insertDemoOrganization, insertDemoUser } from './seed-repository.js';

/** The dev profile's demo organizations and users (docs/api.md, "Demo data"). */
export const DEMO_PASSWORD = 'almoner-demo';
export const DEMO_NONPROFIT = { ein: '123456789', name: 'Demo Food Bank', kind: 'nonprofit' as OrganizationKind };
export const DEMO_FUND_PROVIDER = { ein: '987654321', name: 'Demo Giving Fund', kind: 'fund_provider' as OrganizationKind };
export const DEMO_USERS: readonly { email: string; role: Role; displayName: string }[] = [
  { email: 'owner@example.org', role: 'owner', displayName: 'Olivia Owner' },
  { email: 'admin@example.org', role: 'admin', displayName: 'Adam Admin' },
  { email: 'member@example.org', role: 'member', displayName: 'Mia Member' },
  { email: 'readonly@example.org', role: 'read_only', displayName: 'Reed Readonly' },
];

async function findOrCreateOrganization(
  trx: Executor,
  org: typeof DEMO_NONPROFIT,
  address: { line1: string; city: string; region: string; postal: string },
) {
  const existing = await findOrganizationIdByEin(trx, org.ein);
  if (existing) return existing.id;
  const row = await insertDemoOrganization(trx, {
    ein: org.ein,
    name: org.name,
    kind: org.kind,
    address_line1: address.line1,
    city: address.city,
    region: address.region,
    postal_code: address.postal,
  });
  return row.id;
}

export const accountsStep: SeedStep = {
  name: '2026-11-22-accounts',
  prepare: (ctx: SeedContext) => hashPassword(DEMO_PASSWORD, ctx.passwordParams),
  async run(trx, prepared) {
    const passwordHash = prepared as string;
    const nonprofitId = await findOrCreateOrganization(trx, DEMO_NONPROFIT, {
      line1: '100 Harvest Way',
      city: 'Springfield',
      region: 'IL',
      postal: '62701',
    });
    await findOrCreateOrganization(trx, DEMO_FUND_PROVIDER, { line1: '1 Charity Plaza', city: 'Boston', region: 'MA', postal: '02110' });
    for (const user of DEMO_USERS) {
      const existing = await findUserIdByEmail(trx, user.email);
      const userId =
        existing?.id ?? (await insertDemoUser(trx, { email: user.email, password_hash: passwordHash, display_name: user.displayName })).id;
      await ensureMembership(trx, { organization_id: nonprofitId, user_id: userId, role: user.role });
    }
  },
};
