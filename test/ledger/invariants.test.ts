import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlreadyPosted, InsufficientBalance } from '../../src/ledger/errors.js';
import { placeHold, releaseHold, settleHold } from '../../src/ledger/holds.js';
import { accountBalances, postTransfer } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deposit, ledgerFixture, type LedgerFixture } from '../helpers/ledger.js';

/**
 * The ledger's invariants under random operations (docs/ledger.md): deposits from the outside
 * world, holds, releases, settlements, replays and overdrafts on two financial accounts, each
 * checked against a model of what every balance should be, and verifyLedger after every step.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

type Op =
  | { op: 'deposit'; who: number; amount: number }
  | { op: 'withdraw'; who: number; amount: number }
  | { op: 'hold'; who: number; amount: number }
  | { op: 'release'; pick: number }
  | { op: 'settle'; pick: number }
  | { op: 'replay_deposit' };

const amount = fc.integer({ min: 1, max: 600 });
const who = fc.integer({ min: 0, max: 1 });
const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('deposit' as const), who, amount }),
    fc.record({ op: fc.constant('withdraw' as const), who, amount }),
    fc.record({ op: fc.constant('hold' as const), who, amount }),
    fc.record({ op: fc.constant('release' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('settle' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('replay_deposit' as const) }),
  ),
  { minLength: 1, maxLength: 20 },
);

interface Hold {
  id: string;
  who: number;
  amount: number;
  ended: boolean;
}

describe('ledger invariants', () => {
  it('hold after every step of random deposits, holds, releases, settlements, replays and overdrafts', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (steps: Op[]) => {
        // Two financial accounts sharing one outside world and one settlement account.
        const a = await ledgerFixture(t.db);
        const b = await ledgerFixture(t.db);
        const shared: LedgerFixture[] = [a, { ...b, externalId: a.externalId, settlementId: a.settlementId }];
        const ids = [a.externalId, a.settlementId, ...shared.flatMap((s) => [s.account.availableAccountId, s.account.heldAccountId])];
        const model = new Map(ids.map((id) => [id, 0]));
        const move = (from: string, to: string, cents: number) => {
          model.set(from, model.get(from)! - cents);
          model.set(to, model.get(to)! + cents);
        };
        const holds: Hold[] = [];
        let lastDeposit: { who: number; amount: number; reference: string } | undefined;

        for (const step of steps) {
          if (step.op === 'deposit') {
            const s = shared[step.who]!;
            const reference = crypto.randomUUID();
            await deposit(t.db, s, step.amount, reference);
            move(s.externalId, s.account.availableAccountId, step.amount);
            lastDeposit = { who: step.who, amount: step.amount, reference };
          } else if (step.op === 'replay_deposit') {
            if (!lastDeposit) continue;
            const s = shared[lastDeposit.who]!;
            await expect(deposit(t.db, s, lastDeposit.amount, lastDeposit.reference)).rejects.toBeInstanceOf(AlreadyPosted);
          } else if (step.op === 'withdraw') {
            const s = shared[step.who]!;
            const posting = postTransfer(t.db, {
              environment: s.environment,
              kind: 'withdrawal',
              reference: { type: 'test', id: crypto.randomUUID() },
              entries: [
                { accountId: s.account.availableAccountId, amount: -step.amount },
                { accountId: s.externalId, amount: step.amount },
              ],
            });
            if (model.get(s.account.availableAccountId)! >= step.amount) {
              await posting;
              move(s.account.availableAccountId, s.externalId, step.amount);
            } else {
              await expect(posting).rejects.toBeInstanceOf(InsufficientBalance);
            }
          } else if (step.op === 'hold') {
            const s = shared[step.who]!;
            const id = crypto.randomUUID();
            const placing = placeHold(t.db, {
              environment: s.environment,
              reference: { type: 'disbursement', id },
              account: s.account,
              amount: step.amount,
            });
            if (model.get(s.account.availableAccountId)! >= step.amount) {
              await placing;
              move(s.account.availableAccountId, s.account.heldAccountId, step.amount);
              holds.push({ id, who: step.who, amount: step.amount, ended: false });
            } else {
              await expect(placing).rejects.toBeInstanceOf(InsufficientBalance);
            }
          } else {
            if (holds.length === 0) continue;
            const hold = holds[step.pick % holds.length]!;
            const s = shared[hold.who]!;
            const reference = { type: 'disbursement', id: hold.id };
            const ending =
              step.op === 'release'
                ? releaseHold(t.db, { environment: s.environment, reference })
                : settleHold(t.db, { environment: s.environment, reference, destinationAccountId: s.settlementId });
            if (hold.ended) {
              await expect(ending).rejects.toBeInstanceOf(AlreadyPosted);
            } else {
              await ending;
              move(s.account.heldAccountId, step.op === 'release' ? s.account.availableAccountId : s.settlementId, hold.amount);
              hold.ended = true;
            }
          }
          const verified = await verifyLedger(t.db);
          expect(verified).toMatchObject({ ok: true, sum: 0 });
          const balances = await accountBalances(t.db, ids);
          expect(Object.fromEntries(balances)).toEqual(Object.fromEntries(model));
          for (const id of ids.slice(1)) expect(balances.get(id)).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 50 },
    );
  }, 60_000);
});
