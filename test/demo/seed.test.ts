import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS, verifyPassword } from '../../src/accounts/passwords.js';
import { DEMO_PASSWORD, DEMO_USERS } from '../../src/demo/accounts-step.js';
import { seedDemoData, type SeedStep } from '../../src/demo/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/app.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const dir = tempDir();
const ctx = { passwordParams: MIN_PASSWORD_PARAMS, clientsFile: path.join(dir, 'clients.json'), dataDir: dir };

describe('demo data', () => {
  it('seeds the demo nonprofit, the fund provider and the four demo users with their roles', async () => {
    expect(await seedDemoData(t.db, ctx)).toEqual([
      '2026-11-22-accounts',
      '2026-11-22-demo-client',
      '2026-11-22-nonprofit-data',
      '2026-11-22-bank-data',
    ]);
    const orgs = await t.db.selectFrom('organizations').select(['ein', 'name', 'kind']).orderBy('ein').execute();
    expect(orgs).toEqual([
      { ein: '123456789', name: 'Demo Food Bank', kind: 'nonprofit' },
      { ein: '987654321', name: 'Demo Giving Fund', kind: 'fund_provider' },
    ]);
    const members = await t.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .innerJoin('organizations', 'organizations.id', 'memberships.organization_id')
      .select(['users.email', 'memberships.role', 'organizations.ein', 'users.password_hash'])
      .orderBy('users.email')
      .execute();
    expect(members.map(({ email, role, ein }) => ({ email, role, ein }))).toEqual(
      [...DEMO_USERS].sort((a, b) => a.email.localeCompare(b.email)).map((u) => ({ email: u.email, role: u.role, ein: '123456789' })),
    );
    expect(await verifyPassword(members[0]!.password_hash, DEMO_PASSWORD)).toBe(true);
  });

  it('applies each step once, even when two starts race', async () => {
    const runs: string[] = [];
    const step: SeedStep = {
      name: 'test-race-step',
      async run(trx) {
        runs.push('ran');
        await trx.insertInto('organizations').values({ ein: '444444444', name: 'Race', kind: 'nonprofit' }).execute();
      },
    };
    const results = await Promise.all([seedDemoData(t.db, ctx, [step]), seedDemoData(t.db, ctx, [step]), seedDemoData(t.db, ctx, [step])]);
    expect(results.flat()).toEqual(['test-race-step']);
    expect(runs).toEqual(['ran']);
    expect(await seedDemoData(t.db, ctx)).toEqual([]);
  });
});
