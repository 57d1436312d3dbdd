import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Db } from '../../src/db/database.js';
import { inTransaction } from '../../src/db/executor.js';
import type { DomainError } from '../../src/errors/domain-error.js';
import { AlreadyPosted, InsufficientBalance } from '../../src/ledger/errors.js';
import { placeHold, releaseHold } from '../../src/ledger/holds.js';
import { financialAccountBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deposit, ledgerFixture } from '../helpers/ledger.js';

/**
 * Concurrent postings on one account (docs/ledger.md, "What the database guarantees"): the row
 * lock of the balance update serialises them, so the floor holds under any interleaving and a
 * hold ends once however many ask at the same moment.
 */

let t: TestDatabase;
let pool: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = createDatabase({ url: t.url, poolMax: 12 });
});
afterAll(async () => {
  await pool?.destroy();
  await t?.drop();
});

describe('ledger concurrency', () => {
  it('64 concurrent holds against an available balance covering exactly 10: 10 placed, 54 refused for insufficient balance', async () => {
    const f = await ledgerFixture(t.db);
    await deposit(t.db, f, 1_000);
    const results = await Promise.allSettled(
      Array.from({ length: 64 }, (_, i) =>
        inTransaction(pool, (trx) =>
          placeHold(trx, {
            environment: f.environment,
            reference: { type: 'disbursement', id: `race-${i}` },
            account: f.account,
            amount: 100,
          }),
        ),
      ),
    );
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(refused).toHaveLength(54);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(InsufficientBalance);
      expect(reason).toMatchObject({ code: 'precondition' });
    }
    expect(await financialAccountBalance(t.db, f.account)).toEqual({ current_balance: 1_000, available_balance: 0 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true, sum: 0 });
  });

  it('8 concurrent releases of one hold: exactly one posts, the others are already posted', async () => {
    const f = await ledgerFixture(t.db);
    await deposit(t.db, f, 500);
    const reference = { type: 'disbursement', id: 'released-once' };
    await placeHold(t.db, { environment: f.environment, reference, account: f.account, amount: 300 });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => inTransaction(pool, (trx) => releaseHold(trx, { environment: f.environment, reference }))),
    );
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(refused).toHaveLength(7);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(AlreadyPosted);
      expect((reason as DomainError).code).toBe('conflict');
    }
    expect(await financialAccountBalance(t.db, f.account)).toEqual({ current_balance: 500, available_balance: 500 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true, sum: 0 });
  });
});
