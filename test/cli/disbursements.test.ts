import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { recordAddressSuggestions } from '../../src/directory/suggestions-service.js';
import { approveDisbursement, createDisbursement, disbursementOf } from '../../src/grantmaking/disbursements-service.js';
import { createInboundTransfer, settleAsOperator } from '../../src/grantmaking/inbound-transfers-service.js';
import { financialAccountBalanceOf, financialAccountsOf } from '../../src/grantmaking/accounts-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * `admin disbursements settle|fail` (docs/grantmaking.md, "Disbursements": the production rail) and
 * `admin disbursements verify|reject` (docs/grantmaking.md, "Verification").
 */

let t: TestDatabase;
let organizationId: string;
let recipientId: string;
/** A directory organization with no address: a check to it has nowhere to go. */
let homelessId: string;
let unverifiedId: string;
const production = () => ({ organizationId, environment: 'production' as const });
const sandbox = () => ({ organizationId, environment: 'sandbox' as const });

beforeAll(async () => {
  t = await createTestDatabase();
  await importBmfFile(
    t.db,
    writeBmfFile([
      bmfLine({ EIN: '840000401', NAME: 'MEADOW SCHOOL' }),
      bmfLine({ EIN: '840000402', NAME: 'NOWHERE CLUB', STREET: '' }),
      bmfLine({ EIN: '840000403', NAME: 'MEADOW CIVIC LEAGUE', SUBSECTION: '04', DEDUCTIBILITY: '2' }),
    ]),
  );
  const idOf = async (ein: string) =>
    (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirstOrThrow()).id;
  recipientId = await idOf('840000401');
  homelessId = await idOf('840000402');
  unverifiedId = await idOf('840000403');
  organizationId = (await addOrganization(t.db, { ein: '76-1000001', name: 'Eastside Foundation', kind: 'grantmaker' })).id;
  const [account] = await financialAccountsOf(t.db, production());
  const transfer = await createInboundTransfer(t.db, production(), { amount: 10_000, accountId: account!.id });
  await settleAsOperator(t.db, 'complete', { id: transfer.id, reference: 'FED-1' });
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });

async function submitted(
  scope: { organizationId: string; environment: 'production' | 'sandbox' },
  amount: number,
  recipient = recipientId,
) {
  const record = await createDisbursement(t.db, scope, 'api_key:test', {
    organizationId: recipient,
    amount,
    transactions: [{ amount, type: 'donor_advised_fund_grant' }],
  });
  return (await approveDisbursement(t.db, scope, 'api_key:test', record.row.id)).row;
}

async function balance() {
  const [account] = await financialAccountsOf(t.db, production());
  const found = await financialAccountBalanceOf(t.db, production(), account!.id);
  if (!found) throw new Error('the production financial account has no balance');
  return found;
}

function transfersOf(id: string) {
  return t.db
    .selectFrom('disbursement_transfers')
    .selectAll()
    .where('disbursement_id', '=', id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

function auditOf(id: string) {
  return t.db
    .selectFrom('audit_events')
    .select(['event', 'details'])
    .where(({ ref, eb }) => eb(eb.fn('jsonb_extract_path_text', [ref('details'), eb.val('disbursement_id')]), '=', id))
    .execute();
}

describe('admin disbursements', () => {
  it("settle: the hold leaves the account once, audited with the bank's evidence; again is refused", async () => {
    const row = await submitted(production(), 3_000);
    expect(row.status).toBe('submitted');
    const done = await admin('disbursements', 'settle', '--id', row.id, '--reference', 'ACH-TRACE-1', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ id: row.id, status: 'completed', amount: 3_000, reference: 'ACH-TRACE-1' });
    expect(await balance()).toMatchObject({ current_balance: 7_000, available_balance: 7_000 });
    const [check] = await transfersOf(row.id);
    expect(check).toMatchObject({ rail: 'check', status: 'deposited' });
    expect(await auditOf(row.id)).toEqual([
      {
        event: 'disbursement.completed',
        details: { disbursement_id: row.id, amount: 3_000, reference: 'ACH-TRACE-1', transfer_id: check!.id, via: 'admin_cli' },
      },
    ]);
    const again = await admin('disbursements', 'fail', '--id', row.id, '--reference', 'R01');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('completed');
    expect(await balance()).toMatchObject({ current_balance: 7_000, available_balance: 7_000 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('fail of a check: returned, validating_organization with its hold kept, audited; resubmit mails a new check, audited with why', async () => {
    const row = await submitted(production(), 2_000);
    const done = await admin('disbursements', 'fail', '--id', row.id, '--reference', 'RETURNED-MAIL', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'validating_organization', reference: 'RETURNED-MAIL' });
    expect(await balance()).toMatchObject({ current_balance: 7_000, available_balance: 5_000 });
    expect((await transfersOf(row.id)).map((x) => x.status)).toEqual(['returned']);
    expect((await auditOf(row.id)).map((a) => a.event)).toEqual(['disbursement.returned']);

    const resubmitted = await admin('disbursements', 'resubmit', '--id', row.id, '--reference', 'address confirmed by phone', '--json');
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    expect(JSON.parse(resubmitted.stdout)).toEqual({ id: row.id, status: 'submitted', amount: 2_000 });
    const attempts = await transfersOf(row.id);
    expect(attempts.map((x) => x.status)).toEqual(['returned', 'issued']);
    expect(attempts[1]!.check_number).not.toBe(attempts[0]!.check_number);
    expect(await balance()).toMatchObject({ current_balance: 7_000, available_balance: 5_000 });
    expect((await auditOf(row.id)).find((a) => a.event === 'disbursement.resubmitted')).toEqual({
      event: 'disbursement.resubmitted',
      details: {
        disbursement_id: row.id,
        amount: 2_000,
        reference: 'address confirmed by phone',
        transfer_id: attempts[1]!.id,
        via: 'admin_cli',
      },
    });
    const again = await admin('disbursements', 'resubmit', '--id', row.id, '--reference', 'twice');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('submitted');

    expect((await admin('disbursements', 'settle', '--id', row.id, '--reference', 'CASHED')).code).toBe(0);
    expect(await balance()).toMatchObject({ current_balance: 5_000, available_balance: 5_000 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('a recipient without a mailing address: validating_organization (hold kept); resubmit is refused until an address is suggested, then mails the check there', async () => {
    const row = await submitted(production(), 500, homelessId);
    expect(row.status).toBe('validating_organization');
    const refused = await admin('disbursements', 'resubmit', '--id', row.id, '--reference', 'try again');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('mailing address');
    expect(await transfersOf(row.id)).toEqual([]);
    expect(await auditOf(row.id)).toEqual([]);
    const sandboxRow = await submitted(sandbox(), 1);
    const refusedSandbox = await admin('disbursements', 'resubmit', '--id', sandboxRow.id, '--reference', 'X');
    expect(refusedSandbox.code).not.toBe(0);
    expect(refusedSandbox.stderr).toContain('sandbox');
    // The hold is kept while it waits: the money stays reserved.
    expect(await balance()).toMatchObject({ current_balance: 5_000, available_balance: 4_500 });

    await recordAddressSuggestions(t.db, { environment: 'production', grantmakerId: organizationId }, [
      { ein: '840000402', line1: '9 Hill Rd', line2: 'Unit 2', city: 'Boulder', state: 'CO', zip: '80301' },
    ]);
    const done = await admin('disbursements', 'resubmit', '--id', row.id, '--reference', 'address found', '--json');
    expect(done.code, done.stderr).toBe(0);
    const [check] = await transfersOf(row.id);
    expect(check).toMatchObject({
      rail: 'check',
      status: 'issued',
      recipient_name: 'NOWHERE CLUB',
      mailing_address: { line1: '9 Hill Rd', line2: 'Unit 2', city: 'Boulder', state: 'CO', postal_code: '80301', country: 'US' },
    });
    expect(await balance()).toMatchObject({ current_balance: 5_000, available_balance: 4_500 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('a sandbox disbursement, an unknown id and a missing or blank reference are refused, and nothing moves', async () => {
    const row = await submitted(sandbox(), 1);
    expect(row.status).toBe('awaiting_balance');
    const refusedSandbox = await admin('disbursements', 'settle', '--id', row.id, '--reference', 'X');
    expect(refusedSandbox.code).not.toBe(0);
    expect(refusedSandbox.stderr).toContain('sandbox');
    const blank = await admin('disbursements', 'settle', '--id', row.id, '--reference', '  ');
    expect(blank.code).not.toBe(0);
    expect(blank.stderr).toContain('--reference');
    expect((await admin('disbursements', 'fail', '--id', 'disbursement_x')).code).not.toBe(0);
    expect(await auditOf(row.id)).toEqual([]);
  });

  it('verify: an awaiting_verification disbursement is verified and held (submitted), audited; again is refused', async () => {
    const row = await submitted(production(), 1_000, unverifiedId);
    expect(row.status).toBe('awaiting_verification');
    const before = (await balance())!;
    const done = await admin('disbursements', 'verify', '--id', row.id, '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ id: row.id, status: 'submitted', verified_at: expect.any(String) });
    // Held: the current balance stays, the available one goes down by the amount.
    expect(await balance()).toMatchObject({
      current_balance: before.current_balance,
      available_balance: before.available_balance - 1_000,
    });
    expect(await auditOf(row.id)).toEqual([
      { event: 'disbursement.verified', details: { disbursement_id: row.id, amount: 1_000, status: 'submitted', via: 'admin_cli' } },
    ]);
    const again = await admin('disbursements', 'verify', '--id', row.id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('submitted');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('verify in the sandbox: beyond its balance it goes on to awaiting_balance', async () => {
    const row = await submitted(sandbox(), 500, unverifiedId);
    const done = await admin('disbursements', 'verify', '--id', row.id, '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'awaiting_balance' });
  });

  it('reject: rejected with its reason, audited, nothing moves; a bad or missing reason is refused first', async () => {
    const row = await submitted(production(), 2_000, unverifiedId);
    const before = (await balance())!;
    const bad = await admin('disbursements', 'reject', '--id', row.id, '--reason', 'because');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--reason');
    expect((await admin('disbursements', 'reject', '--id', row.id)).code).not.toBe(0);
    const done = await admin('disbursements', 'reject', '--id', row.id, '--reason', 'requested_by_user', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ id: row.id, status: 'rejected', reason: 'requested_by_user' });
    expect(await balance()).toMatchObject({ current_balance: before.current_balance, available_balance: before.available_balance });
    expect(await auditOf(row.id)).toEqual([
      {
        event: 'disbursement.rejected',
        details: { disbursement_id: row.id, amount: 2_000, reason: 'requested_by_user', via: 'admin_cli' },
      },
    ]);
    expect((await admin('disbursements', 'verify', '--id', 'disbursement_x')).code).not.toBe(0);
  });

  it("an auto-fund production disbursement's transfer, completed by the operator, submits it with the money it brought", async () => {
    const record = await createDisbursement(t.db, production(), 'api_key:test', {
      organizationId: recipientId,
      amount: 500_000,
      transactions: [{ amount: 500_000, type: 'donor_advised_fund_grant' }],
      autoFund: true,
    });
    expect((await approveDisbursement(t.db, production(), 'api_key:test', record.row.id)).row.status).toBe('awaiting_balance');
    const transfer = await t.db
      .selectFrom('inbound_transfers')
      .select('id')
      .where('disbursement_id', '=', record.row.id)
      .executeTakeFirstOrThrow();
    const before = (await balance())!;
    const done = await admin('inbound-transfers', 'complete', '--id', transfer.id, '--reference', 'FED-JIT-1');
    expect(done.code, done.stderr).toBe(0);
    expect((await disbursementOf(t.db, production(), record.row.id))?.row.status).toBe('submitted');
    expect(await balance()).toMatchObject({
      available_balance: before.available_balance,
      current_balance: before.current_balance + 500_000,
    });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('payments pending: the production payments out and not ended, oldest first, as the bank rail port reads them; a bad --limit is refused', async () => {
    const first = await submitted(production(), 100);
    const second = await submitted(production(), 200);
    const listed = async () => {
      const out = await admin('payments', 'pending', '--json');
      expect(out.code, out.stderr).toBe(0);
      return (JSON.parse(out.stdout) as { payments: { disbursement_id: string; rail: string; amount: number; check_number?: string }[] })
        .payments;
    };
    const ids = (await listed()).map((p) => p.disbursement_id);
    expect(ids.indexOf(first.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(second.id)).toBeGreaterThan(ids.indexOf(first.id));
    expect((await listed()).find((p) => p.disbursement_id === first.id)).toMatchObject({
      rail: 'check',
      amount: 100,
      check_number: expect.any(String),
    });
    // Settled through the port (the command's own path), it is no longer pending; the other still is.
    const { bankRail } = await import('../../src/grantmaking/bank-rail.js');
    await bankRail(t.db).paymentSettled({ id: first.id, reference: 'CHK-DEPOSITED' });
    const after = (await listed()).map((p) => p.disbursement_id);
    expect(after).not.toContain(first.id);
    expect(after).toContain(second.id);
    // A sandbox payment is never the production bank's to send.
    const sandboxRow = await submitted(sandbox(), 1);
    expect(after).not.toContain(sandboxRow.id);
    const bad = await admin('payments', 'pending', '--limit', '0');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--limit');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });
});
