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
  rejectDisbursement,
  verifyDisbursement,
} from '../../src/grantmaking/disbursements-service.js';
import { completeInboundTransfer, createInboundTransfer, failInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { DisbursementStatus } from '../../src/db/schema-grantmaking.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Disbursements against a model (docs/grantmaking.md, "Disbursements", "Verification",
 * "auto_fund"): random creates (to a verified recipient or one to verify, auto-funded or not),
 * approvals, cancels, completions, failures, operators' verifications and rejections, deposits,
 * and auto-fund transfers completing or failing, through the services; after every step each
 * disbursement's status and auto-fund transfer and the account's balances are the model's, and
 * the ledger verifies.
 */

let t: TestDatabase;
const recipients = { eligible: '', unverified: '' };
beforeAll(async () => {
  t = await createTestDatabase();
  await importBmfFile(
    t.db,
    writeBmfFile([
      bmfLine({ EIN: '840000301', NAME: 'VALLEY CLINIC' }),
      bmfLine({ EIN: '840000302', NAME: 'VALLEY CIVIC LEAGUE', SUBSECTION: '04', DEDUCTIBILITY: '2' }),
    ]),
  );
  const idOf = async (ein: string) =>
    (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirstOrThrow()).id;
  recipients.eligible = await idOf('840000301');
  recipients.unverified = await idOf('840000302');
});
afterAll(async () => t?.drop());

type Op =
  | { op: 'create'; amount: number; unverified: boolean; autoFund: boolean }
  | { op: 'approve' | 'cancel' | 'complete' | 'fail' | 'verify' | 'reject' | 'fund' | 'unfund'; pick: number }
  | { op: 'deposit'; amount: number };

const amount = fc.integer({ min: 1, max: 500 });
const pick = fc.nat();
const ops = fc.array(
  fc.oneof(
    // Weighted so that disbursements are often decided on and auto-fund transfers often end.
    { weight: 3, arbitrary: fc.record({ op: fc.constant('create' as const), amount, unverified: fc.boolean(), autoFund: fc.boolean() }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('approve' as const), pick }) },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constantFrom('cancel' as const, 'complete' as const, 'fail' as const, 'verify' as const, 'reject' as const),
        pick,
      }),
    },
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('fund' as const, 'unfund' as const), pick }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('deposit' as const), amount: fc.integer({ min: 1, max: 800 }) }) },
  ),
  { minLength: 3, maxLength: 15 },
);

interface Modelled {
  id: string;
  amount: number;
  status: DisbursementStatus;
  unverified: boolean;
  autoFund: boolean;
  /** Its auto-fund transfer, once opened. */
  transfer?: { id: string; status: 'pending' | 'completed' | 'failed' | 'canceled' };
}

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

describe('disbursements against a model', () => {
  it('statuses and balances follow the model, and the ledger verifies, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (steps: Op[]) => {
        const ein = `75-${crypto.randomInt(1_000_000, 9_999_999)}`;
        const org = await addOrganization(t.db, { ein, name: `Model Foundation ${ein}`, kind: 'grantmaker' });
        const scope = { organizationId: org.id, environment: 'sandbox' as const };
        const [account] = await financialAccountsOf(t.db, scope);
        const model = { available: 0, held: 0 };
        const all: Modelled[] = [];

        const submit = (d: Modelled) => {
          d.status = 'submitted';
          model.available -= d.amount;
          model.held += d.amount;
        };
        // Waiting disbursements the available balance now covers are submitted, oldest first; an
        // auto-fund one waits for its own transfer instead.
        const resubmit = () => {
          for (const d of all.filter((x) => x.status === 'awaiting_balance' && !x.autoFund)) {
            if (d.amount > model.available) break;
            submit(d);
          }
        };
        // The balance step: held when covered, else waiting, with its transfer when auto-funded.
        const balanceStep = async (d: Modelled) => {
          if (d.amount <= model.available) return submit(d);
          d.status = 'awaiting_balance';
          if (d.autoFund) {
            const opened = await t.db
              .selectFrom('inbound_transfers')
              .select('id')
              .where('disbursement_id', '=', d.id)
              .executeTakeFirstOrThrow();
            d.transfer = { id: opened.id, status: 'pending' };
          }
        };

        for (const step of steps) {
          const target = all.length > 0 && 'pick' in step ? all[step.pick % all.length] : undefined;
          if (step.op === 'create') {
            const record = await createDisbursement(t.db, scope, 'api_key:model', {
              organizationId: step.unverified ? recipients.unverified : recipients.eligible,
              amount: step.amount,
              transactions: [{ amount: step.amount, type: 'donor_advised_fund_grant' }],
              autoFund: step.autoFund,
            });
            all.push({
              id: record.row.id,
              amount: step.amount,
              status: 'pending_approval',
              unverified: step.unverified,
              autoFund: step.autoFund,
            });
          } else if (step.op === 'fund' || step.op === 'unfund') {
            const funded = all.filter((d) => d.transfer !== undefined);
            const owner = funded.length > 0 ? funded[step.pick % funded.length] : undefined;
            if (owner) {
              const transfer = owner.transfer!;
              const run = step.op === 'fund' ? completeInboundTransfer : failInboundTransfer;
              const allowed = transfer.status === 'pending';
              expect(await refusal(run(t.db, { scope }, transfer.id)), `${step.op} of a ${transfer.status} transfer`).toBe(
                allowed ? 'done' : 'precondition',
              );
              if (allowed && step.op === 'fund') {
                transfer.status = 'completed';
                model.available += owner.amount;
                // Its money is its disbursement's first, then the queue's.
                if (owner.status === 'awaiting_balance') submit(owner);
                resubmit();
              } else if (allowed) {
                transfer.status = 'failed';
                if (owner.status === 'awaiting_balance') owner.status = 'rejected';
              }
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
              verify: target.status === 'awaiting_verification',
              reject: target.status === 'awaiting_verification',
            }[step.op];
            const run = {
              approve: () => approveDisbursement(t.db, scope, 'api_key:model', target.id),
              cancel: () => cancelDisbursement(t.db, scope, target.id),
              complete: () => completeDisbursement(t.db, { scope }, target.id),
              fail: () => failDisbursement(t.db, { scope }, target.id),
              verify: () => verifyDisbursement(t.db, target.id),
              reject: () => rejectDisbursement(t.db, { id: target.id, reason: 'incorrect_recipient' }),
            }[step.op];
            const refused = step.op === 'approve' || step.op === 'cancel' ? 'invalid' : 'precondition';
            expect(await refusal(run()), `${step.op} of a ${target.status} disbursement`).toBe(allowed ? 'done' : refused);
            if (allowed) {
              if (step.op === 'approve') {
                if (target.unverified) target.status = 'awaiting_verification';
                else await balanceStep(target);
              } else if (step.op === 'verify') await balanceStep(target);
              else if (step.op === 'reject') target.status = 'rejected';
              else if (step.op === 'cancel') {
                target.status = 'canceled';
                if (target.transfer?.status === 'pending') target.transfer.status = 'canceled';
              } else if (step.op === 'complete') {
                target.status = 'completed';
                model.held -= target.amount;
              } else {
                target.status = 'failed';
                model.held -= target.amount;
                model.available += target.amount;
                resubmit();
              }
            }
          }
          const balance = await financialAccountBalanceOf(t.db, scope, account!.id);
          expect(balance).toMatchObject({ available_balance: model.available, current_balance: model.available + model.held });
          for (const d of all) expect((await disbursementOf(t.db, scope, d.id))?.row.status, d.id).toBe(d.status);
          // At most one auto-fund transfer a disbursement, opened only for an auto-fund one, in the model's status.
          const transfers = await t.db
            .selectFrom('inbound_transfers')
            .select(['id', 'disbursement_id', 'status'])
            .where('organization_id', '=', org.id)
            .where('disbursement_id', 'is not', null)
            .orderBy('disbursement_id')
            .execute();
          const expected = all
            .filter((d) => d.transfer !== undefined)
            .map((d) => ({ id: d.transfer!.id, disbursement_id: d.id, status: d.transfer!.status }))
            .sort((a, b) => (a.disbursement_id < b.disbursement_id ? -1 : 1));
          expect(transfers).toEqual(expected);
          expect(await verifyLedger(t.db, { environment: 'sandbox' })).toMatchObject({ ok: true });
        }
      }),
      { numRuns: 35 },
    );
  });
});
