import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors/domain-error.js';
import { AlreadyPosted, InsufficientBalance } from '../../src/ledger/errors.js';
import { accountBalances, financialAccountBalance, openLedgerAccount, postTransfer, type TransferInput } from '../../src/ledger/ledger.js';
import { placeHold, releaseHold, settleHold } from '../../src/ledger/holds.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deposit, ledgerFixture, type LedgerFixture } from '../helpers/ledger.js';

/** Posting to the ledger (docs/ledger.md): the service's validation, and what the database refuses on its own. */

let t: TestDatabase;
let f: LedgerFixture;
beforeAll(async () => {
  t = await createTestDatabase();
  f = await ledgerFixture(t.db);
  await deposit(t.db, f, 10_000);
});
afterAll(async () => t?.drop());

const transfers = async () => Number((await sql<{ n: string }>`select count(*) as n from ledger_transfers`.execute(t.db)).rows[0]!.n);

function transfer(overrides: Partial<TransferInput> = {}): TransferInput {
  return {
    environment: f.environment,
    kind: 'adjustment',
    reference: { type: 'test', id: crypto.randomUUID() },
    entries: [
      { accountId: f.externalId, amount: -100 },
      { accountId: f.account.availableAccountId, amount: 100 },
    ],
    ...overrides,
  };
}

/** A rejected promise's error, for assertions on its class, code and message. */
async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; constraint?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; constraint?: string };
  }
  throw new Error('expected a failure');
}

describe('postTransfer validates before it writes', () => {
  const cases: [string, () => Partial<TransferInput>, RegExp][] = [
    ['one entry', () => ({ entries: [{ accountId: f.externalId, amount: 5 }] }), /at least two entries/],
    ['no entries', () => ({ entries: [] }), /at least two entries/],
    [
      'a zero amount',
      () => ({
        entries: [
          { accountId: f.externalId, amount: 0 },
          { accountId: f.account.availableAccountId, amount: 0 },
        ],
      }),
      /entry 1's amount must not be zero/,
    ],
    [
      'a fraction of a cent',
      () => ({
        entries: [
          { accountId: f.externalId, amount: -1.5 },
          { accountId: f.account.availableAccountId, amount: 1.5 },
        ],
      }),
      /whole number of cents/,
    ],
    [
      'an amount beyond the safe integers',
      () => ({
        entries: [
          { accountId: f.externalId, amount: -(2 ** 53) },
          { accountId: f.account.availableAccountId, amount: 2 ** 53 },
        ],
      }),
      /safe integer/,
    ],
    [
      'entries that do not sum to zero',
      () => ({
        entries: [
          { accountId: f.externalId, amount: -100 },
          { accountId: f.account.availableAccountId, amount: 99 },
        ],
      }),
      /must sum to zero \(they sum to -1\)/,
    ],
    [
      'one account twice',
      () => ({
        entries: [
          { accountId: f.externalId, amount: -100 },
          { accountId: f.externalId, amount: 100 },
        ],
      }),
      /appears twice/,
    ],
    ['a malformed kind', () => ({ kind: 'Hold Release' }), /transfer kind must be lower-case/],
    ['a malformed reference type', () => ({ reference: { type: '', id: 'x' } }), /reference type must be/],
    ['an empty reference id', () => ({ reference: { type: 'test', id: '' } }), /reference id must be 1 to 200 characters/],
    ['an unknown environment', () => ({ environment: 'staging' as never }), /environment must be production or sandbox/],
  ];
  for (const [what, overrides, message] of cases) {
    it(`refuses ${what} (invalid, naming it), writing nothing`, async () => {
      const before = await transfers();
      const error = await failure(postTransfer(t.db, transfer(overrides())));
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'invalid' });
      expect(error.message).toMatch(message);
      expect(await transfers()).toBe(before);
    });
  }

  it('refuses an unknown account and an account of the other environment (not_found, naming it)', async () => {
    const unknown = await failure(
      postTransfer(
        t.db,
        transfer({
          entries: [
            { accountId: f.externalId, amount: -1 },
            { accountId: 'lacct_nope', amount: 1 },
          ],
        }),
      ),
    );
    expect(unknown).toMatchObject({ code: 'not_found', message: 'no ledger account lacct_nope' });
    const live = await openLedgerAccount(t.db, { environment: 'production', purpose: 'external' });
    const other = await failure(
      postTransfer(
        t.db,
        transfer({
          entries: [
            { accountId: live.id, amount: -1 },
            { accountId: f.account.availableAccountId, amount: 1 },
          ],
        }),
      ),
    );
    expect(other).toMatchObject({ code: 'not_found', message: `no ledger account ${live.id} in sandbox` });
  });

  it('opens customer accounts only for an organization, and never as may-go-negative', async () => {
    await expect(openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'available' })).rejects.toMatchObject({
      code: 'invalid',
      message: 'a available ledger account belongs to an organization',
    });
    await expect(
      openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'held', organizationId: f.organizationId, mayGoNegative: true }),
    ).rejects.toMatchObject({ code: 'invalid', message: 'a held ledger account may not go below zero' });
    await expect(
      openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'available', organizationId: 'not-a-uuid' }),
    ).rejects.toMatchObject({ code: 'invalid' });
    await expect(
      openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'available', organizationId: crypto.randomUUID() }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(openLedgerAccount(t.db, { environment: 'sandbox', purpose: 'vault' as never })).rejects.toMatchObject({ code: 'invalid' });
  });
});

describe('the database refuses on its own', () => {
  it('an unbalanced transfer inserted by raw SQL, at commit (and one with a single entry or none)', async () => {
    const attempt = (entries: [string, number][]) =>
      t.db.transaction().execute(async (trx) => {
        const id = `ltr_raw_${crypto.randomUUID()}`;
        await sql`insert into ledger_transfers (id, environment, kind, reference_type, reference_id)
                    values (${id}, 'sandbox', 'raw', 'test', ${id})`.execute(trx);
        for (const [account, amount] of entries) {
          await sql`insert into ledger_entries (id, transfer_id, account_id, environment, amount)
                      values (${crypto.randomUUID()}, ${id}, ${account}, 'sandbox', ${amount})`.execute(trx);
        }
      });
    const before = await accountBalances(t.db, [f.externalId, f.account.availableAccountId]);
    for (const entries of [
      [
        [f.externalId, -100],
        [f.account.availableAccountId, 99],
      ],
      [[f.externalId, -100]],
      [],
    ] as [string, number][][]) {
      const error = await failure(attempt(entries));
      expect(error).toMatchObject({ code: '23514', constraint: 'ledger_transfer_balanced' });
      expect(error.message).toMatch(/ledger transfer ltr_raw_\S+ is unbalanced/);
    }
    expect(await accountBalances(t.db, [f.externalId, f.account.availableAccountId])).toEqual(before);
  });

  it('an UPDATE, DELETE or TRUNCATE of entries or transfers, and a balance written directly', async () => {
    for (const statement of [
      sql`update ledger_entries set amount = amount * 2`,
      sql`delete from ledger_entries`,
      sql`truncate ledger_entries`,
      sql`update ledger_transfers set reference_id = 'other'`,
      sql`delete from ledger_transfers`,
      sql`truncate ledger_transfers cascade`,
    ]) {
      const error = await failure(statement.execute(t.db));
      expect(error.message).toMatch(/is append-only \((UPDATE|DELETE|TRUNCATE) refused\)/);
    }
    const direct = await failure(sql`update ledger_accounts set balance = balance + 1 where id = ${f.externalId}`.execute(t.db));
    expect(direct.message).toMatch(/changes only by posting entries/);
    const opened = await failure(
      sql`insert into ledger_accounts (id, environment, purpose, may_go_negative, balance) values ('lacct_rich', 'sandbox', 'external', true, 500)`.execute(
        t.db,
      ),
    );
    expect(opened.message).toMatch(/opens with a zero balance/);
    const negativeCustomer = await failure(
      sql`insert into ledger_accounts (id, environment, organization_id, purpose, may_go_negative)
          values ('lacct_od', 'sandbox', ${f.organizationId}, 'available', true)`.execute(t.db),
    );
    expect(negativeCustomer).toMatchObject({ code: '23514', constraint: 'ledger_accounts_customer_floored' });
  });

  it('a floored account going negative, by raw SQL and through the service (InsufficientBalance, precondition)', async () => {
    const [available] = [f.account.availableAccountId];
    const balance = (await accountBalances(t.db, [available])).get(available)!;
    const raw = await failure(
      t.db.transaction().execute(async (trx) => {
        await sql`insert into ledger_transfers (id, environment, kind, reference_type, reference_id)
                  values ('ltr_overdraft', 'sandbox', 'raw', 'test', 'overdraft')`.execute(trx);
        await sql`insert into ledger_entries (id, transfer_id, account_id, environment, amount) values
                  ('e_od_1', 'ltr_overdraft', ${available}, 'sandbox', ${-(balance + 1)}),
                  ('e_od_2', 'ltr_overdraft', ${f.externalId}, 'sandbox', ${balance + 1})`.execute(trx);
      }),
    );
    expect(raw).toMatchObject({ code: '23514', constraint: 'ledger_accounts_floor' });
    const error = await failure(
      postTransfer(
        t.db,
        transfer({
          entries: [
            { accountId: available, amount: -(balance + 1) },
            { accountId: f.externalId, amount: balance + 1 },
          ],
        }),
      ),
    );
    expect(error).toBeInstanceOf(InsufficientBalance);
    expect(error).toMatchObject({ code: 'precondition', message: `insufficient available balance in ledger account ${available}` });
    expect((await accountBalances(t.db, [available])).get(available)).toBe(balance);
  });

  it('an entry in another environment than its account or transfer', async () => {
    const live = await openLedgerAccount(t.db, { environment: 'production', purpose: 'external' });
    const error = await failure(
      t.db.transaction().execute(async (trx) => {
        await sql`insert into ledger_transfers (id, environment, kind, reference_type, reference_id)
                  values ('ltr_cross', 'sandbox', 'raw', 'test', 'cross')`.execute(trx);
        await sql`insert into ledger_entries (id, transfer_id, account_id, environment, amount) values
                  ('e_x_1', 'ltr_cross', ${live.id}, 'sandbox', -1),
                  ('e_x_2', 'ltr_cross', ${f.externalId}, 'sandbox', 1)`.execute(trx);
      }),
    );
    expect(error).toMatchObject({ code: '23503', constraint: 'ledger_entries_account_fkey' });
  });

  it('a second transfer of the same kind and reference: raw SQL violates the key, the service says already posted', async () => {
    const input = transfer();
    const first = await postTransfer(t.db, input);
    const balances = await accountBalances(t.db, [f.externalId, f.account.availableAccountId]);
    const raw = await failure(
      sql`insert into ledger_transfers (id, environment, kind, reference_type, reference_id)
          values ('ltr_dup', 'sandbox', ${input.kind}, ${input.reference.type}, ${input.reference.id})`.execute(t.db),
    );
    expect(raw).toMatchObject({ code: '23505', constraint: 'ledger_transfers_reference_key' });
    // In the caller's transaction: refused, and the transaction goes on (the replay is simply done).
    const after = await t.db.transaction().execute(async (trx) => {
      const error = await failure(postTransfer(trx, { ...input, entries: [...input.entries].reverse() }));
      expect(error).toBeInstanceOf(AlreadyPosted);
      expect(error).toMatchObject({ code: 'conflict', existingTransferId: first.id });
      expect(error.message).toBe(`ledger transfer adjustment of test ${input.reference.id} already posted`);
      return accountBalances(trx, [f.externalId, f.account.availableAccountId]);
    });
    expect(after).toEqual(balances);
  });
});

describe('holds', () => {
  it('move available to held and back, or on to a destination; a financial account reads current = available + held', async () => {
    const g = await ledgerFixture(t.db);
    await deposit(t.db, g, 1_000);
    const reference = { type: 'disbursement', id: crypto.randomUUID() };
    await placeHold(t.db, { environment: g.environment, reference, account: g.account, amount: 300 });
    expect(await financialAccountBalance(t.db, g.account)).toEqual({ current_balance: 1_000, available_balance: 700 });
    await releaseHold(t.db, { environment: g.environment, reference });
    expect(await financialAccountBalance(t.db, g.account)).toEqual({ current_balance: 1_000, available_balance: 1_000 });
    const second = { type: 'disbursement', id: crypto.randomUUID() };
    await placeHold(t.db, { environment: g.environment, reference: second, account: g.account, amount: 400 });
    await settleHold(t.db, { environment: g.environment, reference: second, destinationAccountId: g.settlementId });
    expect(await financialAccountBalance(t.db, g.account)).toEqual({ current_balance: 600, available_balance: 600 });
    expect((await accountBalances(t.db, [g.settlementId])).get(g.settlementId)).toBe(400);
  });

  it('end once: a second release, a release after a settlement and a settlement after a release are already posted', async () => {
    const g = await ledgerFixture(t.db);
    await deposit(t.db, g, 1_000);
    const released = { type: 'disbursement', id: crypto.randomUUID() };
    const settled = { type: 'disbursement', id: crypto.randomUUID() };
    await placeHold(t.db, { environment: g.environment, reference: released, account: g.account, amount: 100 });
    await placeHold(t.db, { environment: g.environment, reference: settled, account: g.account, amount: 200 });
    await releaseHold(t.db, { environment: g.environment, reference: released });
    await settleHold(t.db, { environment: g.environment, reference: settled, destinationAccountId: g.settlementId });
    const before = await financialAccountBalance(t.db, g.account);
    await expect(releaseHold(t.db, { environment: g.environment, reference: released })).rejects.toBeInstanceOf(AlreadyPosted);
    await expect(
      settleHold(t.db, { environment: g.environment, reference: released, destinationAccountId: g.settlementId }),
    ).rejects.toThrow(`the hold of disbursement ${released.id} already ended (hold_release)`);
    await expect(releaseHold(t.db, { environment: g.environment, reference: settled })).rejects.toThrow(
      `the hold of disbursement ${settled.id} already ended (hold_settle)`,
    );
    await expect(
      placeHold(t.db, { environment: g.environment, reference: settled, account: g.account, amount: 200 }),
    ).rejects.toBeInstanceOf(AlreadyPosted);
    expect(await financialAccountBalance(t.db, g.account)).toEqual(before);
  });

  it('refuse a hold beyond the available balance, a non-positive hold, a mismatched pair and an unknown hold', async () => {
    const g = await ledgerFixture(t.db);
    await deposit(t.db, g, 50);
    const reference = { type: 'disbursement', id: crypto.randomUUID() };
    await expect(placeHold(t.db, { environment: g.environment, reference, account: g.account, amount: 51 })).rejects.toThrow(
      `insufficient available balance in ledger account ${g.account.availableAccountId}`,
    );
    await expect(placeHold(t.db, { environment: g.environment, reference, account: g.account, amount: 0 })).rejects.toMatchObject({
      code: 'invalid',
    });
    const swapped = { availableAccountId: g.account.heldAccountId, heldAccountId: g.account.availableAccountId };
    await expect(placeHold(t.db, { environment: g.environment, reference, account: swapped, amount: 5 })).rejects.toMatchObject({
      code: 'invalid',
    });
    await expect(releaseHold(t.db, { environment: g.environment, reference })).rejects.toMatchObject({
      code: 'not_found',
      message: `no hold for disbursement ${reference.id} in sandbox`,
    });
    expect(await financialAccountBalance(t.db, g.account)).toEqual({ current_balance: 50, available_balance: 50 });
  });
});
