import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeHold } from '../../src/ledger/holds.js';
import { openLedgerAccount } from '../../src/ledger/ledger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { deposit, ledgerFixture, type LedgerFixture } from '../helpers/ledger.js';

/** `admin ledger verify` (docs/ledger.md, "Verification"; docs/operations.md, "Admin CLI"). */

let t: TestDatabase;
let f: LedgerFixture;
beforeAll(async () => {
  t = await createTestDatabase();
  f = await ledgerFixture(t.db);
  await deposit(t.db, f, 2_500);
  await placeHold(t.db, { environment: f.environment, reference: { type: 'disbursement', id: 'd1' }, account: f.account, amount: 700 });
  const live = await ledgerFixture(t.db, 'production');
  await deposit(t.db, live, 100);
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });

/** Scratch corruption: with session_replication_role = replica, triggers (and foreign keys) do not fire. */
async function withoutTriggers(statements: ReturnType<typeof sql>[]) {
  await t.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    for (const statement of statements) await statement.execute(trx);
  });
}

describe('admin ledger verify', () => {
  it('exits 0 on a clean ledger, with its counts, in both environments or one', async () => {
    const all = await admin('ledger', 'verify');
    expect(all).toMatchObject({ code: 0, stderr: '' });
    expect(all.stdout).toBe('ledger verified: 8 accounts, 3 transfers, 6 entries, sum 0\n');
    const sandbox = await admin('ledger', 'verify', '--environment', 'sandbox', '--json');
    expect(sandbox.code).toBe(0);
    expect(JSON.parse(sandbox.stdout)).toEqual({ ok: true, accounts: 4, transfers: 2, entries: 4, sum: 0, environment: 'sandbox' });
    const wrong = await admin('ledger', 'verify', '--environment', 'staging');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/production or sandbox/);
  });

  it('exits 1 naming the account whose stored balance is not the sum of its entries', async () => {
    const available = f.account.availableAccountId;
    await withoutTriggers([sql`update ledger_accounts set balance = balance + 5 where id = ${available}`]);
    const broken = await admin('ledger', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stdout).toBe('');
    expect(broken.stderr).toBe(
      `almoner admin: ledger broken: ledger account ${available} (available, organization ${f.organizationId}, sandbox): stored balance 1805 is not the sum of its entries, 1800\n`,
    );
    const json = await admin('ledger', 'verify', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      problem: { accountId: available, purpose: 'available', organizationId: f.organizationId, environment: 'sandbox', transferId: null },
    });
    // The other environment is untouched.
    expect((await admin('ledger', 'verify', '--environment', 'production')).code).toBe(0);
    await withoutTriggers([sql`update ledger_accounts set balance = balance - 5 where id = ${available}`]);
    expect((await admin('ledger', 'verify')).code).toBe(0);
  });

  it('exits 1 naming the account of a transfer with a lone entry, even when its balance was made to match', async () => {
    const stray = await openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'clearing' });
    const [transfer] = (await sql<{ id: string }>`select id from ledger_transfers where kind = 'hold'`.execute(t.db)).rows;
    await withoutTriggers([
      sql`insert into ledger_entries (id, transfer_id, account_id, environment, amount) values ('lent_lone', ${transfer!.id}, ${stray.id}, 'sandbox', 40)`,
    ]);
    const mismatch = await admin('ledger', 'verify');
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(
      `ledger account ${stray.id} (clearing, no organization, sandbox): stored balance 0 is not the sum of its entries, 40`,
    );
    await withoutTriggers([sql`update ledger_accounts set balance = 40 where id = ${stray.id}`]);
    const unbalanced = await admin('ledger', 'verify', '--environment', 'sandbox');
    expect(unbalanced.code).toBe(1);
    expect(unbalanced.stderr).toMatch(new RegExp(`transfer ${transfer!.id} \\(hold of disbursement d1\\) has 3 entries summing to 40`));
    expect((await admin('ledger', 'verify', '--environment', 'production')).code).toBe(0);
  });
});
