import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { financialAccountsOf, financialAccountBalanceOf } from '../../src/grantmaking/accounts-service.js';
import {
  approveDisbursement,
  cancelDisbursement,
  completeDisbursement,
  createDisbursement,
  disbursementOf,
  failDisbursement,
} from '../../src/grantmaking/disbursements-service.js';
import { resubmitOnboardedRecipient, stopDisbursement } from '../../src/grantmaking/disbursement-retries-service.js';
import { completeInboundTransfer, createInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { onboardSandboxOrganization } from '../../src/directory/organization-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { DisbursementStatus } from '../../src/db/schema-grantmaking.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Disbursements against a model (docs/grantmaking.md, "Disbursements", "Rails and transfers"):
 * random creates (to a recipient paid by check or one onboarded onto ACH), approvals, cancels,
 * completions, failures (an ACH credit fails, a check is returned and keeps its hold), stops,
 * resubmissions of returned checks and deposits through the services; after every step each
 * disbursement's status and payment attempts and the account's balances are the model's, the
 * ledger verifies (balanced, nothing below zero) and every hold has ended at most once.
 */

let t: TestDatabase;
/** Paid by check (no onboarding), and onboarded onto the sandbox's ACH rail. */
let checkRecipient: string;
let achRecipient: string;
beforeAll(async () => {
  t = await createTestDatabase();
  await importBmfFile(
    t.db,
    writeBmfFile([bmfLine({ EIN: '840000301', NAME: 'VALLEY CLINIC' }), bmfLine({ EIN: '840000302', NAME: 'RIDGE CLINIC' })]),
  );
  const rows = await t.db.selectFrom('directory_organizations').select(['id', 'ein']).execute();
  checkRecipient = rows.find((r) => r.ein === '840000301')!.id;
  achRecipient = rows.find((r) => r.ein === '840000302')!.id;
  const onboarder = await addOrganization(t.db, { ein: '75-0000001', name: 'Onboarding Foundation', kind: 'grantmaker' });
  await onboardSandboxOrganization(t.db, { id: achRecipient, settlement: 'SANDBOX_SETTLEMENT_ACH', grantmakerId: onboarder.id });
});
afterAll(async () => t?.drop());

type Op =
  | { op: 'create'; amount: number; ach: boolean }
  | { op: 'approve' | 'cancel' | 'complete' | 'fail' | 'stop'; pick: number }
  | { op: 'resubmit' }
  | { op: 'deposit'; amount: number };

const amount = fc.integer({ min: 1, max: 500 });
const pick = fc.nat();
const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('create' as const), amount, ach: fc.boolean() }),
    fc.record({
      op: fc.constantFrom('approve' as const, 'cancel' as const, 'complete' as const, 'fail' as const, 'stop' as const),
      pick,
    }),
    fc.record({ op: fc.constant('resubmit' as const) }),
    fc.record({ op: fc.constant('deposit' as const), amount: fc.integer({ min: 1, max: 800 }) }),
  ),
  { minLength: 1, maxLength: 15 },
);

interface Modelled {
  id: string;
  amount: number;
  status: DisbursementStatus;
  rail: 'check' | 'ach';
  /** Payment attempts (transfers) opened so far. */
  attempts: number;
}

/** The statuses whose hold is placed, and those whose hold has ended (docs/ledger.md, "Holds"). */
const HELD: readonly DisbursementStatus[] = ['submitted', 'validating_organization', 'completed', 'failed', 'stopped'];
const ENDED: readonly DisbursementStatus[] = ['completed', 'failed', 'stopped'];

/** What an operation refused: its domain code, or the error itself when it is not a domain error. */
async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return 'done';
}

function holdTransfersOf(ids: string[]) {
  return t.db
    .selectFrom('ledger_transfers')
    .select(['reference_id', 'kind'])
    .where('reference_type', '=', 'disbursement')
    .where('reference_id', 'in', ids)
    .execute();
}

describe('disbursements against a model', () => {
  it('statuses, payment attempts and balances follow the model, the ledger verifies and each hold ends at most once, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (steps: Op[]) => {
        const ein = `75-${crypto.randomInt(1_000_000, 9_999_999)}`;
        const org = await addOrganization(t.db, { ein, name: `Model Foundation ${ein}`, kind: 'grantmaker' });
        const scope = { organizationId: org.id, environment: 'sandbox' as const };
        const [account] = await financialAccountsOf(t.db, scope);
        const model = { available: 0, held: 0 };
        const all: Modelled[] = [];

        // Waiting disbursements the available balance now covers are submitted, oldest first.
        const resubmit = () => {
          for (const d of all.filter((x) => x.status === 'awaiting_balance')) {
            if (d.amount > model.available) break;
            d.status = 'submitted';
            d.attempts += 1;
            model.available -= d.amount;
            model.held += d.amount;
          }
        };
        const release = (d: Modelled) => {
          model.held -= d.amount;
          model.available += d.amount;
          resubmit();
        };

        for (const step of steps) {
          const target = all.length > 0 && 'pick' in step ? all[step.pick % all.length] : undefined;
          if (step.op === 'create') {
            const record = await createDisbursement(t.db, scope, 'api_key:model', {
              organizationId: step.ach ? achRecipient : checkRecipient,
              amount: step.amount,
              transactions: [{ amount: step.amount, type: 'donor_advised_fund_grant' }],
            });
            all.push({ id: record.row.id, amount: step.amount, status: 'pending_approval', rail: step.ach ? 'ach' : 'check', attempts: 0 });
          } else if (step.op === 'resubmit') {
            // As onboarding the check recipient would (it stays on checks here): its returned checks are mailed again.
            await resubmitOnboardedRecipient(t.db, 'sandbox', checkRecipient);
            for (const d of all.filter((x) => x.status === 'validating_organization')) {
              d.status = 'submitted';
              d.attempts += 1;
            }
          } else if (step.op === 'deposit') {
            const transfer = await createInboundTransfer(t.db, scope, { amount: step.amount, accountId: account!.id });
            await completeInboundTransfer(t.db, { scope }, transfer.id);
            model.available += step.amount;
            resubmit();
          } else if (target) {
            const allowed = {
              approve: target.status === 'pending_approval',
              cancel: target.status === 'pending_approval' || target.status === 'awaiting_balance',
              complete: target.status === 'submitted',
              fail: target.status === 'submitted',
              stop: target.status === 'submitted' && target.rail === 'check',
            }[step.op];
            const run = {
              approve: () => approveDisbursement(t.db, scope, 'api_key:model', target.id),
              cancel: () => cancelDisbursement(t.db, scope, target.id),
              complete: () => completeDisbursement(t.db, { scope }, target.id),
              fail: () => failDisbursement(t.db, { scope }, target.id),
              stop: () => stopDisbursement(t.db, scope, 'api_key:model', target.id, 'voided'),
            }[step.op];
            const refused = step.op === 'approve' || step.op === 'cancel' ? 'invalid' : 'precondition';
            expect(await refusal(run()), `${step.op} of a ${target.status} disbursement`).toBe(allowed ? 'done' : refused);
            if (allowed) {
              if (step.op === 'approve') {
                if (target.amount <= model.available) {
                  target.status = 'submitted';
                  target.attempts += 1;
                  model.available -= target.amount;
                  model.held += target.amount;
                } else target.status = 'awaiting_balance';
              } else if (step.op === 'cancel') target.status = 'canceled';
              else if (step.op === 'complete') {
                target.status = 'completed';
                model.held -= target.amount;
              } else if (step.op === 'fail' && target.rail === 'check') target.status = 'validating_organization';
              else {
                target.status = step.op === 'fail' ? 'failed' : 'stopped';
                release(target);
              }
            }
          }
          const balance = await financialAccountBalanceOf(t.db, scope, account!.id);
          expect(balance).toMatchObject({ available_balance: model.available, current_balance: model.available + model.held });
          for (const d of all) {
            const record = await disbursementOf(t.db, scope, d.id);
            expect(record?.row.status, d.id).toBe(d.status);
            expect(record?.transfers.length, `${d.id} attempts`).toBe(d.attempts);
          }
          expect(await verifyLedger(t.db, { environment: 'sandbox' })).toMatchObject({ ok: true });
          const holds = all.length === 0 ? [] : await holdTransfersOf(all.map((d) => d.id));
          for (const d of all) {
            const kinds = holds.filter((h) => h.reference_id === d.id).map((h) => h.kind);
            expect(kinds.filter((k) => k === 'hold').length, `${d.id} holds`).toBe(HELD.includes(d.status) ? 1 : 0);
            expect(kinds.filter((k) => k !== 'hold').length, `${d.id} hold ends`).toBe(ENDED.includes(d.status) ? 1 : 0);
          }
        }
      }),
      { numRuns: 25 },
    );
  });
});
