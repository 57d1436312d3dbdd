import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { seedDemoData } from '../../src/demo/seed.js';
import { statementPeriods } from '../../src/demo/bank-data.js';
import { tempDir } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

let t: TestDatabase;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  staff = await createStaff(t.db);
});
afterAll(async () => t?.drop());

async function admin(...argv: string[]) {
  return runAdmin(argv, { DATABASE_URL: t.url });
}

async function counts(organizationId: string, environment: 'production' | 'sandbox') {
  const accounts = await t.db
    .selectFrom('deposit_accounts')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .execute();
  const ids = accounts.map((a) => a.id);
  if (ids.length === 0) return { accounts: 0, statements: 0, transactions: 0 };
  const statements = await t.db
    .selectFrom('deposit_statements')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', 'in', ids)
    .executeTakeFirstOrThrow();
  const transactions = await t.db
    .selectFrom('deposit_transactions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', 'in', ids)
    .executeTakeFirstOrThrow();
  return { accounts: ids.length, statements: Number(statements.n), transactions: Number(transactions.n) };
}

type Counts = Awaited<ReturnType<typeof counts>>;
const plus = (a: Counts, b: Counts): Counts => ({
  accounts: a.accounts + b.accounts,
  statements: a.statements + b.statements,
  transactions: a.transactions + b.transactions,
});

describe('bank demo data', () => {
  it('demo seed adds 2 accounts with 500 transactions each by default and prints account_ids and statement_ids', async () => {
    const [sandbox, production] = [await counts(staff.orgId, 'sandbox'), await counts(staff.orgId, 'production')];
    const out = await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--donations', '1', '--json');
    expect(out.code).toBe(0);
    const ids = JSON.parse(out.stdout) as Record<string, string[]>;
    expect(Object.keys(ids).sort()).toEqual(['account_ids', 'connect_ids', 'donation_ids', 'grant_ids', 'statement_ids']);
    expect(ids.account_ids).toHaveLength(2);
    expect(ids.statement_ids).toHaveLength(48);
    expect(await counts(staff.orgId, 'sandbox')).toEqual(plus(sandbox, { accounts: 2, statements: 48, transactions: 1000 }));
    expect(await counts(staff.orgId, 'production')).toEqual(production);
  });

  it('takes --accounts and --transactions (per account), adds rather than replaces, and refuses bad counts', async () => {
    const before = await counts(staff.orgId, 'sandbox');
    const out = await admin(
      'demo',
      'seed',
      '--org',
      staff.ein,
      '--environment',
      'sandbox',
      '--accounts',
      '3',
      '--transactions',
      '40',
      '--json',
    );
    const ids = JSON.parse(out.stdout) as Record<string, string[]>;
    expect(ids.account_ids).toHaveLength(3);
    expect(ids.statement_ids).toHaveLength(72);
    // Adds: the accounts already there (the default seed's, when it ran first) stay.
    expect(await counts(staff.orgId, 'sandbox')).toEqual(plus(before, { accounts: 3, statements: 72, transactions: 120 }));
    expect((await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--accounts', '-1')).code).toBe(2);
    expect((await admin('demo', 'seed', '--org', staff.ein, '--environment', 'sandbox', '--transactions', 'many')).stderr).toMatch(
      /--transactions must be a whole number/,
    );
  });

  it('makes one statement per completed month of the last 24, and transactions that keep statuses and timestamps consistent', async () => {
    const now = new Date();
    const periods = statementPeriods(now);
    expect(periods).toHaveLength(24);
    expect(periods[23]!.end).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10));
    // Bank data of an organization of its own, as the demo seed makes it.
    const own = await createStaff(t.db);
    expect(
      (
        await admin(
          'demo',
          'seed',
          '--org',
          own.ein,
          '--environment',
          'production',
          '--donations',
          '1',
          '--accounts',
          '2',
          '--transactions',
          '300',
          '--json',
        )
      ).code,
    ).toBe(0);
    const rows = await t.db
      .selectFrom('deposit_transactions')
      .innerJoin('deposit_accounts', 'deposit_accounts.id', 'deposit_transactions.account_id')
      .select(['deposit_transactions.status', 'posted_timestamp', 'transaction_timestamp', 'amount'])
      .where('deposit_accounts.organization_id', '=', own.orgId)
      .execute();
    expect(rows).toHaveLength(600);
    for (const row of rows) {
      expect(row.status === 'POSTED').toBe(row.posted_timestamp !== null);
      expect(row.transaction_timestamp.getTime()).toBeLessThanOrEqual(now.getTime());
      expect(row.transaction_timestamp.getTime()).toBeGreaterThanOrEqual(Date.parse(`${periods[0]!.start}T00:00:00Z`));
      expect(Number(row.amount)).toBeGreaterThan(0);
    }
  });

  it("gives the dev profile's Demo Food Bank 3 accounts, 72 statements and 4,500 transactions in each environment", async () => {
    const dir = tempDir();
    const applied = await seedDemoData(t.db, {
      passwordParams: MIN_PASSWORD_PARAMS,
      clientsFile: path.join(dir, 'clients.json'),
      dataDir: dir,
    });
    expect(applied).toContain('2026-11-22-bank-data');
    const org = await t.db.selectFrom('organizations').select('id').where('ein', '=', '123456789').executeTakeFirstOrThrow();
    for (const environment of ['production', 'sandbox'] as const)
      expect(await counts(org.id, environment)).toEqual({ accounts: 3, statements: 72, transactions: 4500 });
    expect(
      await seedDemoData(t.db, { passwordParams: MIN_PASSWORD_PARAMS, clientsFile: path.join(dir, 'clients.json'), dataDir: dir }),
    ).toEqual([]);
  });
});
