import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { financialAccountBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { giftParties } from '../helpers/gift.js';
import { buildMailBatch, checkLine, createMailBatch, tiffImage } from '../helpers/mail-batch.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
let storage: FolderStorage;
beforeAll(async () => {
  t = await createTestDatabase();
  storage = new FolderStorage(tempDir());
});
afterAll(async () => {
  await t?.drop();
});

async function processingBalance(db: Db, organizationId: string) {
  const account = await db
    .selectFrom('financial_accounts')
    .select(['available_ledger_account_id', 'held_ledger_account_id'])
    .where('organization_id', '=', organizationId)
    .where('environment', '=', 'sandbox')
    .where('account_type', '=', 'processing')
    .executeTakeFirstOrThrow();
  return financialAccountBalance(db, {
    availableAccountId: account.available_ledger_account_id,
    heldAccountId: account.held_ledger_account_id,
  });
}

async function bytesOf(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.get(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('ingesting a batch from storage', () => {
  it('makes mail items, scans, donations, one deposit per envelope on the ledger, and the events', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const before = await processingBalance(t.db, nonprofit.id);
    const images = {
      'e1/check1-front.tif': await tiffImage({ text: '$125.00' }),
      'e1/check1-back.tif': await tiffImage({ text: 'endorsed' }),
      'e1/check2-front.tif': await tiffImage({ text: '$1,250.00' }),
      'e1/envelope.tif': await tiffImage({ width: 800, height: 400, text: 'Riverside Food Bank' }),
      'e2/check.tif': await tiffImage({ text: '$12.5?' }),
      'e3/envelope.tif': await tiffImage({ text: 'Return to sender' }),
      'e4/single.tif': await tiffImage({ text: '$40.00' }),
    };
    const zip = await buildMailBatch(
      [
        checkLine('E1', '125.00', 'e1/check1-front.tif', {
          back_image: 'e1/check1-back.tif',
          donor_address_line1: '1 Main St',
          donor_city: 'Newark',
          donor_state: 'NJ',
          donor_postal_code: '07101',
        }),
        checkLine('E1', '1,250.00', 'e1/check2-front.tif', { donor_first_name: 'Grace', donor_last_name: 'Hopper', memo: '' }),
        { envelope_id: 'E1', received_at: '2026-11-27', item_type: 'envelope', front_image: 'e1/envelope.tif' },
        checkLine('E2', '12.5', 'e2/check.tif'),
        { envelope_id: 'E3', received_at: '2026-11-27', item_type: 'return_to_sender', front_image: 'e3/envelope.tif' },
        checkLine('E4', '40.00', 'e4/single.tif', { check_number: '7781', purpose: 'Gala' }),
      ],
      images,
    );
    const batch = await createMailBatch(t.db, lockbox, provider.id);
    await storage.put(batch.storageKey, zip);
    const ingestor = new MailBatchIngestor({ db: t.db, storage });
    const tick = await ingestor.runOnce();
    expect(tick).toMatchObject({
      uploaded: 1,
      ingested: { batchId: batch.id, outcome: { status: 'ingested', mailItems: 4, donations: 3, deposits: 2, amount: 141500 } },
    });

    const row = await t.db.selectFrom('mail_batches').selectAll().where('id', '=', batch.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'ingested',
      size_bytes: String(zip.length),
      sha256: crypto.createHash('sha256').update(zip).digest('hex'),
      attempts: 1,
    });

    const items = await t.db.selectFrom('mail_items').selectAll().where('batch_id', '=', batch.id).orderBy('envelope_id').execute();
    expect(items.map((i) => [i.envelope_id, i.status, i.review_line, i.review_reason])).toEqual([
      ['E1', 'processed', null, null],
      ['E2', 'needs_review', 5, 'the amount "12.5" does not parse'],
      ['E3', 'rejected', 6, 'the envelope holds a return_to_sender item'],
      ['E4', 'processed', null, null],
    ]);
    expect(items.every((i) => i.organization_id === nonprofit.id && i.received_at.toISOString() === '2026-11-27T00:00:00.000Z')).toBe(true);
    const [e1, e2, e3, e4] = items;

    const scanImages = await t.db
      .selectFrom('scan_images')
      .innerJoin('mail_item_scans', 'mail_item_scans.file_id', 'scan_images.file_id')
      .select([
        'mail_item_scans.mail_item_id',
        'scan_images.position',
        'scan_images.label',
        'scan_images.storage_key',
        'scan_images.sha256',
        'scan_images.width',
      ])
      .where('mail_item_scans.batch_id', '=', batch.id)
      .orderBy('scan_images.storage_key')
      .execute();
    const e1Images = scanImages.filter((i) => i.mail_item_id === e1!.id).sort((a, b) => a.position - b.position);
    expect(e1Images.map((i) => [i.position, i.label, i.storage_key])).toEqual([
      [0, 'check_front', `scans/${batch.id}/1/0.tiff`],
      [1, 'check_back', `scans/${batch.id}/1/1.tiff`],
      [2, 'check_front', `scans/${batch.id}/1/2.tiff`],
      [3, 'envelope', `scans/${batch.id}/1/3.tiff`],
    ]);
    expect(e1Images[3]!.width).toBe(800);
    expect(scanImages).toHaveLength(7);
    for (const image of scanImages) {
      expect(
        crypto
          .createHash('sha256')
          .update(await bytesOf(image.storage_key))
          .digest('hex'),
      ).toBe(image.sha256);
    }
    expect((await bytesOf(`scans/${batch.id}/1/0.tiff`)).equals(images['e1/check1-front.tif'])).toBe(true);

    const donations = await t.db
      .selectFrom('donations')
      .selectAll()
      .where('organization_id', '=', nonprofit.id)
      .orderBy('source_line')
      .execute();
    expect(donations.map((d) => [d.mail_item_id, d.source_line, d.amount_gross, d.amount_net, d.amount_fee, d.payment_status])).toEqual([
      [e1!.id, 2, '12500', '12500', '0', 'RECEIVED_IN_CHARIOT'],
      [e1!.id, 3, '125000', '125000', '0', 'RECEIVED_IN_CHARIOT'],
      [e4!.id, 7, '4000', '4000', '0', 'RECEIVED_IN_CHARIOT'],
    ]);
    expect(donations[0]).toMatchObject({
      payment_source_id: lockbox.paymentSourceId,
      note: 'For the pantry',
      purpose: 'General',
      external_id: expect.stringMatching(/^\d{8}$/),
      id: expect.stringMatching(/^donation_[0-9a-z]{26}$/),
      primary_donor: {
        first_name: 'Ada',
        last_name: 'Lovelace',
        full_name: 'Ada Lovelace',
        email: 'ada@example.com',
        address: { line1: '1 Main St', city: 'Newark', state: 'NJ', postal_code: '07101', country: 'US' },
      },
    });
    expect(donations[1]!.primary_donor).toMatchObject({ full_name: 'Grace Hopper' });
    expect(donations[2]!.purpose).toBe('Gala');

    const deposits = await t.db.selectFrom('deposits').selectAll().where('organization_id', '=', nonprofit.id).orderBy('amount').execute();
    expect(deposits.map((d) => [d.mail_item_id, d.amount, d.status, d.rail, d.payment_source_id, d.financial_account_id])).toEqual([
      [e4!.id, '4000', 'complete', 'check_deposit', lockbox.paymentSourceId, lockbox.financialAccountId],
      [e1!.id, '137500', 'complete', 'check_deposit', lockbox.paymentSourceId, lockbox.financialAccountId],
    ]);
    expect(deposits[0]!.rail_details).toMatchObject({ status: 'deposited', auxiliary_on_us: '7781', routing_number: '011000015' });
    expect(deposits[1]!.rail_details).not.toHaveProperty('auxiliary_on_us');
    expect(donations.filter((d) => d.mail_item_id === e1!.id).every((d) => d.deposit_id === deposits[1]!.id)).toBe(true);
    expect(donations.filter((d) => d.mail_item_id === e2!.id || d.mail_item_id === e3!.id)).toEqual([]);

    const transfers = await t.db
      .selectFrom('ledger_transfers')
      .select(['kind', 'reference_type', 'reference_id'])
      .where('reference_type', '=', 'deposit')
      .execute();
    expect(transfers.filter((x) => deposits.some((d) => d.id === x.reference_id)).map((x) => x.kind)).toEqual([
      'check_deposit',
      'check_deposit',
    ]);
    const after = await processingBalance(t.db, nonprofit.id);
    expect(after.available_balance - before.available_balance).toBe(141500);
    expect(await verifyLedger(t.db, { environment: 'sandbox' })).toMatchObject({ ok: true, sum: 0 });

    const events = await t.db
      .selectFrom('events')
      .select(['category', 'associated_object_id', 'associated_object_type'])
      .where('organization_id', '=', nonprofit.id)
      .execute();
    expect(
      events
        .filter((e) => e.category === 'donation.created')
        .map((e) => e.associated_object_id)
        .sort(),
    ).toEqual(donations.map((d) => d.id).sort());
    expect(
      events
        .filter((e) => e.category === 'deposit.created')
        .map((e) => e.associated_object_id)
        .sort(),
    ).toEqual(deposits.map((d) => d.id).sort());
  });
});
