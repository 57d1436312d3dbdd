import crypto from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import { prefixedId, ulid } from '../../src/db/ids.js';
import type { Environment } from '../../src/db/schema.js';
import type { DepositRail, MailItemStatus } from '../../src/db/schema-gift.js';
import type { TestLockbox } from './gift.js';

/**
 * Gift processing's records written straight into the tables, as ingestion would leave them
 * (docs/gift-processing.md): mail items with scans, deposits, donations. Ids are time-ordered by
 * `createdAt`, so a list's order is known.
 */

const hex64 = () => crypto.randomBytes(32).toString('hex');

async function batchOf(db: Db, lockbox: TestLockbox, providerId: string): Promise<string> {
  const id = prefixedId('batch');
  await db
    .insertInto('mail_batches')
    .values({
      id,
      environment: lockbox.environment,
      provider_organization_id: providerId,
      lockbox_id: lockbox.id,
      storage_key: `batches/${id}.zip`,
      upload_expires_at: new Date(Date.now() + 900_000),
      status: 'ingested',
    })
    .execute();
  return id;
}

/** A mail item of the lockbox with `scans` scans, the newest scan last in time. */
export async function insertMailItem(
  db: Db,
  input: {
    nonprofitId: string;
    providerId: string;
    lockbox: TestLockbox;
    status?: MailItemStatus;
    createdAt?: Date;
    receivedAt?: Date;
    scans?: number;
  },
) {
  const createdAt = input.createdAt ?? new Date();
  const batchId = await batchOf(db, input.lockbox, input.providerId);
  const id = `mail_${ulid(createdAt.getTime())}`;
  await db
    .insertInto('mail_items')
    .values({
      id,
      environment: input.lockbox.environment,
      organization_id: input.nonprofitId,
      lockbox_id: input.lockbox.id,
      batch_id: batchId,
      envelope_id: `env-${crypto.randomBytes(6).toString('hex')}`,
      status: input.status ?? 'processed',
      review_line: null,
      review_reason: null,
      received_at: input.receivedAt ?? createdAt,
      created_at: createdAt,
    })
    .execute();
  const scans: { file_id: string; created_at: Date }[] = [];
  for (let i = 0; i < (input.scans ?? 1); i += 1) {
    const at = new Date(createdAt.getTime() + i * 60_000);
    const fileId = `file_${ulid(at.getTime())}`;
    await db
      .insertInto('mail_item_scans')
      .values({ file_id: fileId, mail_item_id: id, batch_id: batchId, digest: hex64(), created_at: at })
      .execute();
    scans.push({ file_id: fileId, created_at: at });
  }
  return { id, scans };
}

/** A deposit on the payment source's account. */
export async function insertDeposit(
  db: Db,
  input: {
    nonprofitId: string;
    paymentSourceId: string;
    financialAccountId: string;
    environment?: Environment;
    amount?: number;
    rail?: DepositRail;
    railDetails?: Record<string, unknown>;
    settledAt?: Date | null;
    createdAt?: Date;
    status?: 'pending' | 'complete' | 'failed';
  },
) {
  const createdAt = input.createdAt ?? new Date();
  const id = `deposit_${ulid(createdAt.getTime())}`;
  await db
    .insertInto('deposits')
    .values({
      id,
      environment: input.environment ?? 'sandbox',
      organization_id: input.nonprofitId,
      payment_source_id: input.paymentSourceId,
      financial_account_id: input.financialAccountId,
      mail_item_id: null,
      status: input.status ?? 'complete',
      amount: input.amount ?? 12_500,
      description: 'Lockbox deposit',
      rail: input.rail ?? 'check_deposit',
      rail_details: JSON.stringify(input.railDetails ?? { auxiliary_on_us: '1042', routing_number: '021000021', status: 'deposited' }),
      settled_at: input.settledAt === undefined ? createdAt : input.settledAt,
      returned_at: null,
      bank_created_at: null,
      created_at: createdAt,
    })
    .execute();
  return id;
}

/** A donation, with whichever 2026-04-01 parts the test gives. */
export async function insertDonation(
  db: Db,
  input: {
    nonprofitId: string;
    paymentSourceId: string;
    environment?: Environment;
    amount?: number;
    createdAt?: Date;
    depositId?: string | null;
    settlementReceivedAt?: Date | null;
    settlementSettledAt?: Date | null;
    extra?: Partial<Record<'joint_donor' | 'initiation' | 'donor_advised_fund_grant' | 'platform' | 'corporate_match', unknown>>;
    individualGiftAmount?: number | null;
  },
) {
  const createdAt = input.createdAt ?? new Date();
  const id = `donation_${ulid(createdAt.getTime())}`;
  const amount = input.amount ?? 12_500;
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  await db
    .insertInto('donations')
    .values({
      id,
      environment: input.environment ?? 'sandbox',
      organization_id: input.nonprofitId,
      external_id: String(crypto.randomInt(10_000_000, 99_999_999)),
      payment_source_id: input.paymentSourceId,
      deposit_id: input.depositId ?? null,
      dafpay_tracking_id: null,
      amount_gross: amount,
      amount_net: amount,
      amount_fee: 0,
      currency: 'USD',
      purpose: 'Where needed most',
      note: '',
      primary_donor: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace' }),
      payment_status: 'RECEIVED_IN_CHARIOT',
      created_at: createdAt,
      updated_at: createdAt,
      canceled_at: null,
      mail_item_id: null,
      source_line: null,
      individual_gift_amount: input.individualGiftAmount ?? null,
      joint_donor: json(input.extra?.joint_donor),
      initiation: json(input.extra?.initiation),
      donor_advised_fund_grant: json(input.extra?.donor_advised_fund_grant),
      platform: json(input.extra?.platform),
      corporate_match: json(input.extra?.corporate_match),
      settlement_received_at: input.settlementReceivedAt ?? null,
      settlement_settled_at: input.settlementSettledAt ?? null,
    })
    .execute();
  return id;
}
