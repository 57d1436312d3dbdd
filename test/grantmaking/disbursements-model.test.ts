import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { onboardSandboxOrganization } from '../../src/directory/organization-service.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { financialAccountsOf, financialAccountBalanceOf } from '../../src/grantmaking/accounts-service.js';
import { resubmitOnboardedRecipient, stopDisbursement } from '../../src/grantmaking/disbursement-retries-service.js';
import {
  approveDisbursement,
  cancelDisbursement,
  completeDisbursement,
  createDisbursement,
  disbursementsPage,
  failDisbursement,
} from '../../src/grantmaking/disbursements-service.js';
import { rejectDisbursement, verifyDisbursement } from '../../src/grantmaking/disbursement-verification-service.js';
import { completeInboundTransfer, createInboundTransfer, failInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { DisbursementStatus } from '../../src/db/schema-grantmaking.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Disbursements against a model (docs/grantmaking.md, "Disbursements", "Verification",
 * "auto_fund", "Rails and transfers", "Returned checks", "Stopping a check"): random creates (to
 * a recipient paid by check or onboarded onto ACH, verified or to verify, auto-funded or not),
 * approvals, cancels, completions, failures (an ACH credit fails, a check is returned and keeps
 * its hold), stops, operators' verifications and rejections, resubmissions of returned checks,
 * deposits, and auto-fund transfers completing or failing, through the services. After every
 * step: each disbursement's status, payment attempts and auto-fund transfer are the model's, the
 * account's balances are the model's and not below zero, the ledger verifies (balanced, nothing
 * below zero), and every hold is placed once while held and has ended at most once.
 */

type Rail = 'check' | 'ach';
let t: TestDatabase;
/** The recipients by rail, and whether an operator must verify them (a 501(c)(4) is not eligible). */
const recipients: Record<Rail, { eligible: string; unverified: string }> = {
  check: { eligible: '', unverified: '' },
  ach: { eligible: '', unverified: '' },
};
beforeAll(async () => {
  t = await createTestDatabase();
  const civic = { SUBSECTION: '04', DEDUCTIBILITY: '2' };
  await importBmfFile(
    t.db,
    writeBmfFile([
      bmfLine({ EIN: '840000301', NAME: 'VALLEY CLINIC' }),
      bmfLine({ EIN: '840000302', NAME: 'VALLEY CIVIC LEAGUE', ...civic }),
      bmfLine({ EIN: '840000303', NAME: 'RIDGE CLINIC' }),
      bmfLine({ EIN: '840000304', NAME: 'RIDGE CIVIC LEAGUE', ...civic }),
    ]),
  );
  const idOf = async (ein: string) =>
    (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirstOrThrow()).id;
  recipients.check = { eligible: await idOf('840000301'), unverified: await idOf('840000302') };
  recipients.ach = { eligible: await idOf('840000303'), unverified: await idOf('840000304') };
  const onboarder = await addOrganization(t.db, { ein: '75-0000001', name: 'Onboarding Foundation', kind: 'grantmaker' });
  for (const id of Object.values(recipients.ach))
    await onboardSandboxOrganization(t.db, { id, settlement: 'SANDBOX_SETTLEMENT_ACH', grantmakerId: onboarder.id });
});
afterAll(async () => t?.drop());

type Op =
  | { op: 'create'; amount: number; rail: Rail; unverified: boolean; autoFund: boolean }
  | {
      op: 'approve' | 'cancel' | 'complete' | 'fail' | 'stop' | 'verify' | 'reject' | 'fund' | 'unfund' | 'resubmit';
      pick: number;
      fitting: boolean;
    }
  | { op: 'deposit'; amount: number };

const amount = fc.integer({ min: 1, max: 500 });
const pick = fc.nat();
/** Mostly a disbursement (or transfer) the operation fits, so that runs go deep; else any, to see the refusals. */
const fitting = fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
const ops = fc.array(
  fc.oneof(
    // Weighted so that disbursements are often decided on, paid, returned, stopped and resubmitted.
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('create' as const),
        amount,
        rail: fc.constantFrom<Rail>('check', 'ach'),
        unverified: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        autoFund: fc.boolean(),
      }),
    },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('approve' as const), pick, fitting }) },
    { weight: 5, arbitrary: fc.record({ op: fc.constantFrom('complete' as const, 'fail' as const, 'stop' as const), pick, fitting }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('verify' as const, 'reject' as const), pick, fitting }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick, fitting }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('fund' as const, 'unfund' as const), pick, fitting }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('resubmit' as const), pick, fitting }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('deposit' as const), amount: fc.integer({ min: 1, max: 400 }) }) },
  ),
  { minLength: 15, maxLength: 32, size: 'max' },
);
/** The account's balance before the first step: none, or some, so that approvals both wait and submit. */
const opening = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2000 }));

/** A create to a recipient on `rail`, verified and not auto-funded unless asked. */
const create =
  (rail: Rail) =>
  (amount: number, more: { unverified?: boolean; autoFund?: boolean } = {}): Op => ({
    op: 'create',
    amount,
    rail,
    unverified: more.unverified ?? false,
    autoFund: more.autoFund ?? false,
  });
const check = create('check');
const ach = create('ach');
/** The `n`th disbursement (or auto-fund transfer) created. */
const on = (op: Exclude<Op['op'], 'create' | 'deposit'>, n: number): Op => ({ op, pick: n, fitting: false });
/**
 * Runs made first, before the random ones, so that every run of the test walks the long paths
 * random runs reach only now and then.
 */
const examples: [number, Op[]][] = [
  // The queue: a large waiting one is not passed over by a smaller later one.
  [
    0,
    [
      check(500),
      check(1),
      on('approve', 0),
      on('approve', 1),
      { op: 'deposit', amount: 1 },
      { op: 'deposit', amount: 499 },
      on('cancel', 1),
    ],
  ],
  // A verified recipient's check returned (hold kept, no cancel), mailed again, then stopped.
  [
    1000,
    [
      check(300, { unverified: true }),
      on('approve', 0),
      on('verify', 0),
      on('fail', 0),
      on('cancel', 0),
      on('resubmit', 0),
      on('stop', 0),
      on('complete', 0),
    ],
  ],
  // An auto-fund transfer's money is its disbursement's before the queue's; a failed ACH credit frees its money for the queue.
  [
    0,
    [
      ach(100),
      on('approve', 0),
      ach(50, { autoFund: true }),
      on('approve', 1),
      on('fund', 0),
      on('unfund', 0),
      { op: 'deposit', amount: 100 },
      on('fail', 0),
      on('complete', 1),
    ],
  ],
  // A verified ACH recipient paid, failed, and the money goes to a waiting check; an auto-fund transfer fails.
  [
    300,
    [
      ach(200, { unverified: true, autoFund: true }),
      on('approve', 0),
      on('verify', 0),
      check(200),
      on('approve', 1),
      on('fail', 0),
      on('complete', 1),
      check(500, { autoFund: true }),
      on('approve', 2),
      on('unfund', 0),
    ],
  ],
];

interface Modelled {
  id: string;
  amount: number;
  status: DisbursementStatus;
  rail: Rail;
  unverified: boolean;
  autoFund: boolean;
  /** Payment attempts (transfers on its rail) opened so far. */
  attempts: number;
  /** Its auto-fund transfer, once opened. */
  transfer?: { id: string; status: 'pending' | 'completed' | 'failed' | 'canceled' };
}

/** The statuses whose hold is placed, and those whose hold has ended (docs/ledger.md, "Holds"). */
const HELD: readonly DisbursementStatus[] = ['submitted', 'validating_organization', 'completed', 'failed', 'stopped'];
const ENDED: readonly DisbursementStatus[] = ['completed', 'failed', 'stopped'];

type TargetOp = 'approve' | 'cancel' | 'complete' | 'fail' | 'stop' | 'verify' | 'reject';
/** Whether the services accept `op` on a disbursement the model has in this state. */
function accepts(op: TargetOp, d: Modelled): boolean {
  return {
    approve: d.status === 'pending_approval',
    cancel: d.status === 'pending_approval' || d.status === 'awaiting_balance',
    complete: d.status === 'submitted',
    fail: d.status === 'submitted',
    stop: d.status === 'submitted' && d.rail === 'check',
    verify: d.status === 'awaiting_verification',
    reject: d.status === 'awaiting_verification',
  }[op];
}

/** The `pick`th of `among`, of those `fits` keeps when asked and there are any. */
function chosen<T>(among: T[], step: { pick: number; fitting: boolean }, fits: (x: T) => boolean): T | undefined {
  const fit = step.fitting ? among.filter(fits) : [];
  const from = fit.length > 0 ? fit : among;
  return from.length > 0 ? from[step.pick % from.length] : undefined;
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
  it('statuses, payment attempts, auto-fund transfers, balances and holds follow the model, and the ledger verifies, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(opening, ops, async (deposit: number, steps: Op[]) => {
        const ein = `75-${crypto.randomInt(1_000_000, 9_999_999)}`;
        const org = await addOrganization(t.db, { ein, name: `Model Foundation ${ein}`, kind: 'grantmaker' });
        const scope = { organizationId: org.id, environment: 'sandbox' as const };
        const [account] = await financialAccountsOf(t.db, scope);
        if (deposit > 0) {
          const transfer = await createInboundTransfer(t.db, scope, { amount: deposit, accountId: account!.id });
          await completeInboundTransfer(t.db, { scope }, transfer.id);
        }
        const model = { available: deposit, held: 0 };
        const all: Modelled[] = [];

        // To `submitted`: the amount is held and a transfer opens on the recipient's rail.
        const submit = (d: Modelled) => {
          d.status = 'submitted';
          d.attempts += 1;
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
        // A hold released to the available balance, which then submits what waits for it.
        const release = (d: Modelled) => {
          model.held -= d.amount;
          model.available += d.amount;
          resubmit();
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
          if (step.op === 'create') {
            const record = await createDisbursement(t.db, scope, 'api_key:model', {
              organizationId: recipients[step.rail][step.unverified ? 'unverified' : 'eligible'],
              amount: step.amount,
              transactions: [{ amount: step.amount, type: 'donor_advised_fund_grant' }],
              autoFund: step.autoFund,
            });
            all.push({
              id: record.row.id,
              amount: step.amount,
              status: 'pending_approval',
              rail: step.rail,
              unverified: step.unverified,
              autoFund: step.autoFund,
              attempts: 0,
            });
          } else if (step.op === 'fund' || step.op === 'unfund') {
            const funded = all.filter((d) => d.transfer !== undefined);
            const owner = chosen(funded, step, (d) => d.transfer!.status === 'pending');
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
          } else if (step.op === 'resubmit') {
            // As onboarding the recipient would (a check recipient stays on checks here): its returned
            // checks, of every grantmaker, are mailed again, their holds kept.
            const target = chosen(all, step, (d) => d.status === 'validating_organization');
            if (!target) continue;
            const recipient = recipients[target.rail][target.unverified ? 'unverified' : 'eligible'];
            await resubmitOnboardedRecipient(t.db, 'sandbox', recipient);
            const same = (d: Modelled) => d.rail === target.rail && d.unverified === target.unverified;
            for (const d of all.filter((x) => x.status === 'validating_organization' && same(x))) {
              d.status = 'submitted';
              d.attempts += 1;
            }
          } else if (step.op === 'deposit') {
            const transfer = await createInboundTransfer(t.db, scope, { amount: step.amount, accountId: account!.id });
            await completeInboundTransfer(t.db, { scope }, transfer.id);
            model.available += step.amount;
            resubmit();
          } else {
            const { op } = step;
            const target = chosen(all, step, (d) => accepts(op, d));
            if (!target) continue;
            const allowed = accepts(op, target);
            const run = {
              approve: () => approveDisbursement(t.db, scope, 'api_key:model', target.id),
              cancel: () => cancelDisbursement(t.db, scope, target.id),
              complete: () => completeDisbursement(t.db, { scope }, target.id),
              fail: () => failDisbursement(t.db, { scope }, target.id),
              stop: () => stopDisbursement(t.db, scope, 'api_key:model', target.id, 'voided'),
              verify: () => verifyDisbursement(t.db, target.id),
              reject: () => rejectDisbursement(t.db, { id: target.id, reason: 'incorrect_recipient' }),
            }[step.op];
            const refused = step.op === 'approve' || step.op === 'cancel' ? 'invalid' : 'precondition';
            expect(await refusal(run()), `${step.op} of a ${target.status} ${target.rail} disbursement`).toBe(allowed ? 'done' : refused);
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
              } else if (step.op === 'fail' && target.rail === 'check') target.status = 'validating_organization';
              else {
                target.status = step.op === 'fail' ? 'failed' : 'stopped';
                release(target);
              }
            }
          }

          const balance = await financialAccountBalanceOf(t.db, scope, account!.id);
          expect(balance).toMatchObject({ available_balance: model.available, current_balance: model.available + model.held });
          expect(balance?.available_balance, 'available balance').toBeGreaterThanOrEqual(0);
          const records = new Map((await disbursementsPage(t.db, scope, {}, undefined, 100)).map((r) => [r.row.id, r]));
          expect(records.size).toBe(all.length);
          for (const d of all) {
            expect(records.get(d.id)?.row.status, d.id).toBe(d.status);
            expect(records.get(d.id)?.transfers.length, `${d.id} attempts`).toBe(d.attempts);
          }
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
          // Each hold placed once while it is held, and ended at most once (docs/ledger.md, "Holds").
          const holds =
            all.length === 0
              ? []
              : await t.db
                  .selectFrom('ledger_transfers')
                  .select(['reference_id', 'kind'])
                  .where('reference_type', '=', 'disbursement')
                  .where(
                    'reference_id',
                    'in',
                    all.map((d) => d.id),
                  )
                  .execute();
          for (const d of all) {
            const kinds = holds.filter((h) => h.reference_id === d.id).map((h) => h.kind);
            expect(kinds.filter((k) => k === 'hold').length, `${d.id} holds`).toBe(HELD.includes(d.status) ? 1 : 0);
            expect(kinds.filter((k) => k !== 'hold').length, `${d.id} hold ends`).toBe(ENDED.includes(d.status) ? 1 : 0);
          }
        }
      }),
      { numRuns: 20, examples },
    );
  });
});
