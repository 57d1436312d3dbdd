import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  depositTotal,
  formatAmount,
  parseAmount,
  parseReceivedAt,
  planIndex,
  validRoutingNumber,
  type PlannedEnvelope,
} from '../../src/gift-processing/batch-index.js';
import { checkLine, csvOf } from '../helpers/mail-batch.js';

function planned(text: string): PlannedEnvelope[] {
  const plan = planIndex(text);
  if (!plan.ok) throw new Error(`refused at line ${plan.line}: ${plan.reason}`);
  return plan.envelopes;
}

describe('amounts', () => {
  it('reads dollars with or without thousands separators, as cents', () => {
    expect(parseAmount('125.00')).toBe(12500);
    expect(parseAmount('1,250.00')).toBe(125000);
    expect(parseAmount('0.07')).toBe(7);
    expect(parseAmount('1,234,567.89')).toBe(123456789);
  });

  it('refuses anything else', () => {
    for (const text of ['', '125', '125.0', '$125.00', '-5.00', '1,25.00', '12,50.00', '1.250,00', '125.001', 'abc', ' 1.00x']) {
      expect(parseAmount(text), text).toBeUndefined();
    }
  });

  it('parse(format(amount)) = amount', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (cents) => parseAmount(formatAmount(cents)) === cents));
  });
});

describe('routing numbers and dates', () => {
  it('checks the ABA checksum', () => {
    expect(validRoutingNumber('011000015')).toBe(true);
    expect(validRoutingNumber('021000021')).toBe(true);
    expect(validRoutingNumber('021000022')).toBe(false);
    expect(validRoutingNumber('12345678')).toBe(false);
  });

  it('reads RFC 3339 and YYYY-MM-DD, and nothing else', () => {
    expect(parseReceivedAt('2026-11-27')?.toISOString()).toBe('2026-11-27T00:00:00.000Z');
    expect(parseReceivedAt('2026-11-27T09:30:00-05:00')?.toISOString()).toBe('2026-11-27T14:30:00.000Z');
    for (const text of ['2026-02-30', '27/11/2026', '2026-11-27T09:30', 'yesterday', '2026-11-27T25:00:00Z']) {
      expect(parseReceivedAt(text), text).toBeUndefined();
    }
  });
});

describe('planIndex', () => {
  it('groups consecutive lines into envelopes with their images in order', () => {
    const envelopes = planned(
      csvOf([
        checkLine('E1', '125.00', 'e1/front.tif', { back_image: 'e1/back.tif' }),
        { ...checkLine('E1', '1,250.00', 'e1/front2.tif'), routing_number: '' },
        { envelope_id: 'E1', received_at: '2026-11-27', item_type: 'envelope', front_image: 'e1/env.tif' },
        { envelope_id: 'E2', received_at: '2026-11-28T10:00:00Z', item_type: 'correspondence', front_image: 'e2/letter.tif' },
      ]),
    );
    expect(envelopes.map((e) => [e.envelopeId, e.line, e.status])).toEqual([
      ['E1', 2, 'processed'],
      ['E2', 5, 'processed'],
    ]);
    expect(envelopes[0]!.images.map((i) => [i.path, i.label])).toEqual([
      ['e1/front.tif', 'check_front'],
      ['e1/back.tif', 'check_back'],
      ['e1/front2.tif', 'check_front'],
      ['e1/env.tif', 'envelope'],
    ]);
    expect(envelopes[0]!.checks.map((c) => [c.line, c.amount, c.routingNumber])).toEqual([
      [2, 12500, '011000015'],
      [3, 125000, null],
    ]);
    expect(envelopes[0]!.checks[0]!.donor).toEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      full_name: 'Ada Lovelace',
      email: 'ada@example.com',
    });
    expect(depositTotal(envelopes[0]!)).toBe(137500);
    expect(envelopes[1]!.images[0]!.label).toBe('correspondence');
  });

  it('counts lines from the header, quoted line breaks included', () => {
    const text =
      'envelope_id,received_at,item_type,amount,memo,front_image\r\nE1,2026-11-27,check,5.00,"two\nlines",a.tif\r\nE2,2026-11-27,check,x,,b.tif\r\n';
    const envelopes = planned(text);
    expect(envelopes[0]!.checks[0]!.memo).toBe('two\nlines');
    expect(envelopes[1]).toMatchObject({ status: 'needs_review', reviewLine: 4, reviewReason: 'the amount "x" does not parse' });
  });

  it('puts an envelope with a bad amount or routing number in review, with its line and no checks counted as deposited', () => {
    const envelopes = planned(
      csvOf([
        checkLine('E1', '10.00', 'a.tif'),
        checkLine('E1', '12.5', 'b.tif'),
        checkLine('E2', '10.00', 'c.tif', { routing_number: '011000016' }),
      ]),
    );
    expect(envelopes[0]).toMatchObject({ status: 'needs_review', reviewLine: 3, reviewReason: 'the amount "12.5" does not parse' });
    expect(envelopes[1]).toMatchObject({
      status: 'needs_review',
      reviewLine: 4,
      reviewReason: 'the routing number "011000016" fails its checksum',
    });
  });

  it('puts a check whose donor does not fit the published Donor in review', () => {
    const envelopes = planned(
      csvOf([
        checkLine('E1', '10.00', 'a.tif', { donor_phone: '+1 (415) 555-1212 ext. 4410' }),
        checkLine('E2', '10.00', 'b.tif', { donor_country: 'USA' }),
      ]),
    );
    expect(envelopes.map((e) => e.reviewReason)).toEqual([
      'the donor_phone is longer than 20 characters',
      'the donor country "USA" is not two letters',
    ]);
  });

  it('rejects an envelope holding a return_to_sender or unrelated item', () => {
    const envelopes = planned(
      csvOf([
        checkLine('E1', '10.00', 'a.tif'),
        { ...checkLine('E1', '', 'b.tif'), item_type: 'return_to_sender' },
        { ...checkLine('E2', '', 'c.tif'), item_type: 'unrelated' },
      ]),
    );
    expect(envelopes.map((e) => [e.status, e.reviewLine])).toEqual([
      ['rejected', 3],
      ['rejected', 4],
    ]);
  });

  it('refuses a duplicate envelope id, unknown and missing columns, bad CSV, bad lines, naming the line', () => {
    const dup = csvOf([checkLine('E1', '1.00', 'a.tif'), checkLine('E2', '1.00', 'b.tif'), checkLine('E1', '1.00', 'c.tif')]);
    expect(planIndex(dup)).toEqual({
      ok: false,
      line: 4,
      reason: "the envelope E1 comes back after another envelope's lines (first at line 2)",
    });
    expect(planIndex(csvOf([{ ...checkLine('E1', '1.00', 'a.tif'), amout: '1.00' }]))).toEqual({
      ok: false,
      line: 1,
      reason: 'unknown column "amout"',
    });
    expect(planIndex(csvOf([{ envelope_id: 'E1', received_at: '2026-11-27', item_type: 'check' }]))).toEqual({
      ok: false,
      line: 1,
      reason: 'the required column "front_image" is missing',
    });
    const ragged = planIndex('envelope_id,received_at,item_type,front_image\nE1,2026-11-27,envelope,a.tif\nE2,2026-11-27\n');
    expect(ragged).toMatchObject({ ok: false, line: 3 });
    expect(planIndex('envelope_id,received_at,item_type,front_image\nE1,2026-11-27,"env"x,a.tif\n')).toMatchObject({ ok: false, line: 2 });
    expect(planIndex(csvOf([checkLine('E 1', '1.00', 'a.tif')]))).toMatchObject({ ok: false, line: 2 });
    expect(planIndex(csvOf([{ ...checkLine('E1', '1.00', 'a.tif'), item_type: 'coupon' }]))).toMatchObject({ ok: false, line: 2 });
    expect(planIndex(csvOf([{ ...checkLine('E1', '1.00', 'a.tif'), received_at: 'tuesday' }]))).toMatchObject({ ok: false, line: 2 });
    expect(planIndex('envelope_id,received_at,item_type,front_image\n')).toEqual({ ok: false, line: 1, reason: 'the index has no lines' });
  });

  it('deposit total = sum of the checks, whatever the amounts', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10_000_000_00 }), { minLength: 1, maxLength: 20 }), (amounts) => {
        const [envelope] = planned(csvOf(amounts.map((cents, i) => checkLine('E1', formatAmount(cents), `${i}.tif`))));
        expect(envelope!.checks.map((c) => c.amount)).toEqual(amounts);
        return depositTotal(envelope!) === amounts.reduce((a, b) => a + b, 0);
      }),
      { numRuns: 50 },
    );
  });
});
