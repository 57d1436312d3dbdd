import crypto from 'node:crypto';
import type { Executor } from '../db/executor.js';
import type { DonorJson, Environment, PaymentStatus } from '../db/schema.js';
import { ulid } from '../db/ids.js';
import { insertConnects, insertDonations, insertGrants } from './seed-repository.js';

/**
 * Realistic nonprofit data (connects, grants, donations) for demos and benchmarks. Dates are
 * spread over the last 24 months; inserts are batched so 100,000 donations take seconds.
 */
export interface NonprofitDataOptions {
  organizationId: string;
  environment: Environment;
  connects?: number;
  grantsPerConnect?: number;
  donations?: number;
}

export interface SeededIds {
  connect_ids: string[];
  grant_ids: string[];
  donation_ids: string[];
}

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Maya',
  'Omar',
  'Lena',
  'Ravi',
  'Sofia',
  'Kwame',
  'Hana',
  'Diego',
  'Nora',
  'Tomas',
  'Ines',
  'Yuki',
  'Amara',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Okafor',
  'Haddad',
  'Novak',
  'Iyer',
  'Rossi',
  'Mensah',
  'Sato',
  'Alvarez',
  'Berg',
  'Kowalski',
  'Silva',
  'Tanaka',
  'Diallo',
];
const CITIES = [
  { city: 'Springfield', state: 'IL', postal_code: '62701' },
  { city: 'Portland', state: 'OR', postal_code: '97201' },
  { city: 'Austin', state: 'TX', postal_code: '73301' },
  { city: 'Boston', state: 'MA', postal_code: '02110' },
];
const PURPOSES = ['Where needed most', 'General Operating Support', 'Holiday Meal Drive', 'Weekend Backpack Program', 'Mobile Pantry'];
const NOTES = ['', '', 'In memory of grandma', 'Keep up the great work!', 'For the kids program'];
const FUNDS = ['daf-fidelity-charitable', 'daf-schwab-charitable', 'daf-vanguard-charitable', 'daf-national-philanthropic-trust'];
/**
 * The demo donations' payment statuses, as often as a real list has them. The names carry the
 * vendor's word (INCOMING_TO_CHARIOT and the like) because the published API's `payment_status`
 * is an enum of exactly these five (spec/openapi/2026-01-15.yaml and 2026-04-01.yaml, schema
 * Donation): no neutral value is allowed, and a client validating against the published document
 * would refuse one (test/gateway/published-schema-smoke.test.ts checks each of these against it).
 */
export const DEMO_PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'RECEIVED_IN_CHARIOT',
  'RECEIVED_IN_CHARIOT',
  'RECEIVED_OUTSIDE_CHARIOT',
  'INCOMING_TO_CHARIOT',
  'CANCELED',
];

const pick = <T>(list: readonly T[]): T => list[crypto.randomInt(list.length)]!;

export { ulid };

function randomDate(now: number): Date {
  const twoYears = 730 * 86_400_000;
  return new Date(now - crypto.randomInt(twoYears));
}

function donor(): DonorJson {
  const first = pick(FIRST);
  const last = pick(LAST);
  const place = pick(CITIES);
  return {
    full_name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    email: `${first}.${last}@example.com`.toLowerCase(),
    address: { line1: `${crypto.randomInt(1, 999)} Main St.`, ...place, country: 'US' },
  };
}

async function inBatches<T>(rows: T[], size: number, insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
}

/** Inserts through the caller's executor: pass a transaction to make it all-or-nothing. */
export async function seedNonprofitData(db: Executor, options: NonprofitDataOptions): Promise<SeededIds> {
  const { organizationId, environment } = options;
  const now = Date.now();
  const prefix = environment === 'production' ? 'live' : 'test';
  const connects = Array.from({ length: options.connects ?? 2 }, (_, i) => ({
    id: `${prefix}_${crypto.randomBytes(32).toString('hex')}`,
    environment,
    organization_id: organizationId,
    name: i === 0 ? 'Website donate button' : `Campaign page ${i}`,
  }));
  const grants = connects.flatMap((connect) =>
    Array.from({ length: options.grantsPerConnect ?? 10 }, () => {
      const created = randomDate(now);
      const first = pick(FIRST);
      const last = pick(LAST);
      return {
        id: crypto.randomUUID(),
        environment,
        organization_id: organizationId,
        connect_id: connect.id,
        tracking_id: crypto.randomBytes(5).toString('hex').toUpperCase(),
        fund_id: pick(FUNDS),
        external_grant_id: crypto.randomBytes(6).toString('hex'),
        amount: crypto.randomInt(25, 5000) * 100,
        status: pick(['initiated', 'initiated', 'completed', 'canceled']),
        first_name: first,
        last_name: last,
        email: `${first}.${last}@example.com`.toLowerCase(),
        note: pick(NOTES) || null,
        created_at: created,
        updated_at: created,
      };
    }),
  );
  const donations = Array.from({ length: options.donations ?? 200 }, () => {
    const created = randomDate(now);
    const gross = crypto.randomInt(10, 2500) * 100;
    const fee = Math.round(gross * 0.029) + 30;
    const status = pick(DEMO_PAYMENT_STATUSES);
    return {
      id: `donation_${ulid(created.getTime())}`,
      environment,
      organization_id: organizationId,
      external_id: String(crypto.randomInt(10_000_000, 99_999_999)),
      payment_source_id: `payment_source_${ulid(created.getTime())}`,
      deposit_id: status.startsWith('RECEIVED') ? `deposit_${ulid(created.getTime())}` : null,
      dafpay_tracking_id: crypto.randomInt(3) === 0 ? crypto.randomBytes(5).toString('hex').toUpperCase() : null,
      amount_gross: gross,
      amount_net: gross - fee,
      amount_fee: fee,
      currency: 'USD',
      purpose: pick(PURPOSES),
      note: pick(NOTES),
      primary_donor: JSON.stringify(donor()),
      payment_status: status,
      created_at: created,
      updated_at: created,
      canceled_at: status === 'CANCELED' ? new Date(created.getTime() + 86_400_000) : null,
    };
  });
  if (connects.length) await insertConnects(db, connects);
  await inBatches(grants, 1000, (batch) => insertGrants(db, batch));
  await inBatches(donations, 1000, (batch) => insertDonations(db, batch));
  return { connect_ids: connects.map((c) => c.id), grant_ids: grants.map((g) => g.id), donation_ids: donations.map((d) => d.id) };
}
