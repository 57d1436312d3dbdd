/**
 * Writes the example mail batch of docs/gift-processing.md ("Walkthrough") to the path given:
 * a ZIP of index.csv and TIFF scans in the documented format. Three envelopes: two checks with
 * their fronts and backs and a reply card, a check whose amount the scanner could not read
 * (needs review), and a letter returned to sender (rejected). A lockbox provider can use it to
 * try an integration; the tests use the same builders (test/helpers/mail-batch.ts).
 *
 * Run: npm run -s example:mail-batch -- batch.zip [YYYY-MM-DD]
 */
import fs from 'node:fs';
import { buildMailBatch, csvOf, tiffImage, type IndexRow } from '../test/helpers/mail-batch.js';

const [out, day = new Date().toISOString().slice(0, 10)] = process.argv.slice(2);
if (!out || !/^\d{4}-\d{2}-\d{2}$/.test(day)) {
  process.stderr.write('usage: npm run -s example:mail-batch -- <out.zip> [YYYY-MM-DD]\n');
  process.exit(2);
}

const rows: IndexRow[] = [
  {
    envelope_id: 'ENV-1001',
    received_at: day,
    item_type: 'check',
    amount: '250.00',
    check_number: '1042',
    routing_number: '021000021',
    payer_name: 'Maria Alvarez',
    donor_first_name: 'Maria',
    donor_last_name: 'Alvarez',
    donor_email: 'maria.alvarez@example.org',
    donor_address_line1: '18 Orchard Lane',
    donor_city: 'Springfield',
    donor_state: 'OR',
    donor_postal_code: '97477',
    memo: 'In memory of Rosa',
    purpose: 'Where needed most',
    front_image: 'ENV-1001/check-1-front.tif',
    back_image: 'ENV-1001/check-1-back.tif',
  },
  {
    envelope_id: 'ENV-1001',
    received_at: day,
    item_type: 'check',
    amount: '1,000.00',
    check_number: '5531',
    routing_number: '011000015',
    payer_name: 'Hillside Garden Club',
    purpose: 'Summer meals',
    front_image: 'ENV-1001/check-2-front.tif',
    back_image: 'ENV-1001/check-2-back.tif',
  },
  { envelope_id: 'ENV-1001', received_at: day, item_type: 'correspondence', front_image: 'ENV-1001/reply-card.tif' },
  {
    envelope_id: 'ENV-1002',
    received_at: day,
    item_type: 'check',
    amount: '7S.00',
    payer_name: 'J. Chen',
    front_image: 'ENV-1002/check-front.tif',
  },
  { envelope_id: 'ENV-1003', received_at: day, item_type: 'return_to_sender', front_image: 'ENV-1003/envelope.tif' },
];

const images: Record<string, Buffer> = {
  'ENV-1001/check-1-front.tif': await tiffImage({ text: 'Pay $250.00 — Maria Alvarez' }),
  'ENV-1001/check-1-back.tif': await tiffImage({ text: 'For deposit only' }),
  'ENV-1001/check-2-front.tif': await tiffImage({ text: 'Pay $1,000.00 — Hillside Garden Club' }),
  'ENV-1001/check-2-back.tif': await tiffImage({ text: 'For deposit only' }),
  'ENV-1001/reply-card.tif': await tiffImage({ width: 500, height: 350, text: 'Keep up the good work!' }),
  'ENV-1002/check-front.tif': await tiffImage({ text: 'Pay $7?.00 — J. Chen' }),
  'ENV-1003/envelope.tif': await tiffImage({ width: 640, height: 300, text: 'RETURN TO SENDER' }),
};

fs.writeFileSync(out, await buildMailBatch(csvOf(rows), images));
process.stdout.write(`${out}\n`);
