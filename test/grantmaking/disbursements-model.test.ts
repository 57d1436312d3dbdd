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
import { completeInboundTransfer, createInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { DisbursementStatus } from '../../src/db/schema-grantmaking.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Disbursements against a model (docs/grantmaking.md, "Disbursements"): random creates,
 * approvals, cancels, completions, failures and deposits through the services; after every step
 * each disbursement's status and the account's balances are the model's, and the ledger verifies.
 */

let t: TestDatabase;
let recipientId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000301', NAME: 'VALLEY CLINIC' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').executeTakeFirstOrThrow()).id;
});
afterAll(async () => t?.drop());

type Op =
  { op: 'create'; amount: number } | { op: 'approve' | 'cancel' | 'complete' | 'fail'; pick: number } | { op: 'deposit'; amount: number };

const amount = fc.integer({ min: 1, max: 500 });
const pick = fc.nat();
const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('create' as const), amount }),
    fc.record({ op: fc.constantFrom('approve' as const, 'cancel' as const, 'complete' as const, 'fail' as const), pick }),
    fc.record({ op: fc.constant('deposit' as const), amount: fc.integer({ min: 1, max: 800 }) }),
  ),
  { minLength: 1, maxLength: 15 },
);

interface Modelled {
  id: string;
  amount: number;
  status: DisbursementStatus;
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

        // Waiting disbursements the available balance now covers are submitted, oldest first.
        const resubmit = () => {
          for (const d of all.filter((x) => x.status === 'awaiting_balance')) {
            if (d.amount > model.available) break;
            d.status = 'submitted';
            model.available -= d.amount;
            model.held += d.amount;
          }
        };

        for (const step of steps) {
          const target = all.length > 0 && 'pick' in step ? all[step.pick % all.length] : undefined;
          if (step.op === 'create') {
            const record = await createDisbursement(t.db, scope, 'api_key:model', {
              organizationId: recipientId,
              amount: step.amount,
              transactions: [{ amount: step.amount, type: 'donor_advised_fund_grant' }],
            });
            all.push({ id: record.row.id, amount: step.amount, status: 'pending_approval' });
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
            }[step.op];
            const run = {
              approve: () => approveDisbursement(t.db, scope, 'api_key:model', target.id),
              cancel: () => cancelDisbursement(t.db, scope, target.id),
              complete: () => completeDisbursement(t.db, { scope }, target.id),
              fail: () => failDisbursement(t.db, { scope }, target.id),
            }[step.op];
            const refused = step.op === 'complete' || step.op === 'fail' ? 'precondition' : 'invalid';
            expect(await refusal(run()), `${step.op} of a ${target.status} disbursement`).toBe(allowed ? 'done' : refused);
            if (allowed) {
              if (step.op === 'approve') {
                if (target.amount <= model.available) {
                  target.status = 'submitted';
                  model.available -= target.amount;
                  model.held += target.amount;
                } else target.status = 'awaiting_balance';
              } else if (step.op === 'cancel') target.status = 'canceled';
              else if (step.op === 'complete') {
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
          expect(await verifyLedger(t.db, { environment: 'sandbox' })).toMatchObject({ ok: true });
        }
      }),
      { numRuns: 25 },
    );
  });
});
