import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '../../src/gift-processing/batch-index.js';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { accountBalances } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { giftParties } from '../helpers/gift.js';
import { buildMailBatch, checkLine, createMailBatch, tiffImage } from '../helpers/mail-batch.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
let storage: FolderStorage;
let image: Buffer;
beforeAll(async () => {
  t = await createTestDatabase();
  storage = new FolderStorage(tempDir());
  image = await tiffImage({ text: 'check' });
});
afterAll(async () => {
  await t?.drop();
});

/** Envelopes of one to four checks each, amounts from a cent to a million dollars. */
const envelopes = fc.array(fc.array(fc.integer({ min: 1, max: 100_000_000 }), { minLength: 1, maxLength: 4 }), {
  minLength: 1,
  maxLength: 5,
});

describe('ingested amounts (property)', () => {
  it('each deposit is the sum of its checks, the nonprofit is credited the total, and the ledger sums to zero', async () => {
    await fc.assert(
      fc.asyncProperty(envelopes, async (amounts) => {
        const { nonprofit, provider, lockbox } = await giftParties(t.db);
        const lines = amounts.flatMap((checks, e) => checks.map((cents) => checkLine(`P${e}`, formatAmount(cents), 'c.tif')));
        const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
        await storage.put(batch.storageKey, await buildMailBatch(lines, { 'c.tif': image }));
        const tick = await new MailBatchIngestor({ db: t.db, storage }).runOnce();
        expect(tick.ingested?.outcome.status).toBe('ingested');

        const deposits = await t.db
          .selectFrom('deposits')
          .innerJoin('mail_items', 'mail_items.id', 'deposits.mail_item_id')
          .select(['mail_items.envelope_id', 'deposits.amount', 'deposits.id'])
          .where('deposits.organization_id', '=', nonprofit.id)
          .execute();
        const byEnvelope = Object.fromEntries(deposits.map((d) => [d.envelope_id, Number(d.amount)]));
        expect(byEnvelope).toEqual(Object.fromEntries(amounts.map((checks, e) => [`P${e}`, checks.reduce((a, b) => a + b, 0)])));
        const donations = await t.db
          .selectFrom('donations')
          .select(['amount_gross', 'deposit_id'])
          .where('organization_id', '=', nonprofit.id)
          .execute();
        for (const deposit of deposits) {
          const sum = donations.filter((d) => d.deposit_id === deposit.id).reduce((a, d) => a + Number(d.amount_gross), 0);
          expect(sum).toBe(Number(deposit.amount));
        }
        const account = await t.db
          .selectFrom('financial_accounts')
          .select('available_ledger_account_id')
          .where('organization_id', '=', nonprofit.id)
          .where('environment', '=', 'sandbox')
          .where('account_type', '=', 'processing')
          .executeTakeFirstOrThrow();
        const balances = await accountBalances(t.db, [account.available_ledger_account_id]);
        expect(balances.get(account.available_ledger_account_id)).toBe(amounts.flat().reduce((a, b) => a + b, 0));
        expect(await verifyLedger(t.db, { environment: 'sandbox' })).toMatchObject({ ok: true, sum: 0 });
      }),
      { numRuns: 12 },
    );
  });
});
