import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** `admin inbound-transfers complete|fail` (docs/grantmaking.md, "The production rail"). */

let t: TestDatabase;
let organizationId: string;
const accounts = new Map<string, { id: string; available: string }>();

beforeAll(async () => {
  t = await createTestDatabase();
  organizationId = (await addOrganization(t.db, { ein: '73-1000001', name: 'Northside Foundation', kind: 'grantmaker' })).id;
  for (const row of await t.db.selectFrom('financial_accounts').selectAll().where('organization_id', '=', organizationId).execute())
    accounts.set(row.environment, { id: row.id, available: row.available_ledger_account_id });
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });

async function transfer(environment: 'production' | 'sandbox', amount: number) {
  const row = await createInboundTransfer(t.db, { organizationId, environment }, { amount, accountId: accounts.get(environment)!.id });
  return row.id;
}

async function available(environment: 'production' | 'sandbox') {
  const row = await t.db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('id', '=', accounts.get(environment)!.available)
    .executeTakeFirstOrThrow();
  return Number(row.balance);
}

function auditOf(id: string) {
  return t.db
    .selectFrom('audit_events')
    .select(['event', 'environment', 'organization_id', 'details'])
    .where(({ ref, eb }) => eb(eb.fn('jsonb_extract_path_text', [ref('details'), eb.val('inbound_transfer_id')]), '=', id))
    .execute();
}

describe('admin inbound-transfers', () => {
  it("complete posts a production transfer once, with the bank's evidence audited; again is refused", async () => {
    const id = await transfer('production', 50_000);
    const done = await admin('inbound-transfers', 'complete', '--id', id, '--reference', 'FED-20261129-000123', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ id, status: 'completed', amount: 50_000, reference: 'FED-20261129-000123' });
    expect(await available('production')).toBe(50_000);
    expect(await auditOf(id)).toEqual([
      {
        event: 'inbound_transfer.completed',
        environment: 'production',
        organization_id: organizationId,
        details: { inbound_transfer_id: id, amount: 50_000, reference: 'FED-20261129-000123', via: 'admin_cli' },
      },
    ]);
    const again = await admin('inbound-transfers', 'complete', '--id', id, '--reference', 'FED-20261129-000123');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/completed; only a pending one can be completed/);
    expect(await available('production')).toBe(50_000);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('fail moves no money and is audited; a sandbox transfer, an unknown id or a missing reference are refused', async () => {
    const id = await transfer('production', 700);
    const failed = await admin('inbound-transfers', 'fail', '--id', id, '--reference', 'ACH return R01');
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout).toMatch(/failed/);
    expect(await available('production')).toBe(50_000);
    expect((await auditOf(id)).map((a) => a.event)).toEqual(['inbound_transfer.failed']);

    const sandbox = await transfer('sandbox', 100);
    const refused = await admin('inbound-transfers', 'complete', '--id', sandbox, '--reference', 'x');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/no production inbound transfer .* settled by its simulations/);
    expect(await available('sandbox')).toBe(0);

    const missing = await admin('inbound-transfers', 'complete', '--id', sandbox);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--reference is required/);
    const control = await admin('inbound-transfers', 'complete', '--id', sandbox, '--reference', 'a\u0007b');
    expect(control.stderr).toMatch(/bank's evidence/);
  });
});
