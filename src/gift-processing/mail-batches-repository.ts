import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { DonorJson, Environment } from '../db/schema.js';
import type { MailItemsTable, ScanImageLabel } from '../db/schema-gift.js';

/** The queries of mail batch ingestion (docs/gift-processing.md, "Ingestion"). */

export interface ClaimedBatch {
  id: string;
  environment: Environment;
  lockbox_id: string;
  storage_key: string;
  /** This claim's try: with the status, it fences the outcome to the claim that made it. */
  attempts: number;
}

/** Batches still awaiting their upload, oldest first. */
export function listAwaitingUpload(db: Executor, limit: number) {
  return db
    .selectFrom('mail_batches')
    .select(['id', 'storage_key', 'upload_expires_at'])
    .where('status', '=', 'awaiting_upload')
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

export async function markUploaded(db: Executor, id: string, sizeBytes: number, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('mail_batches')
    .set({ status: 'uploaded', size_bytes: sizeBytes, uploaded_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_upload')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markExpired(db: Executor, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('mail_batches')
    .set({ status: 'expired', updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'awaiting_upload')
    // A PUT still arriving holds the batch by its lease (upload-repository.ts, claimBatchUpload).
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Claims one uploaded batch whose lease is free: a lease of `leaseSeconds` and one more try.
 * skip locked lets several ingestors claim side by side, each a different batch.
 */
export async function claimUploadedBatch(db: Executor, now: Date, leaseSeconds: number): Promise<ClaimedBatch | undefined> {
  const leaseUntil = new Date(now.getTime() + leaseSeconds * 1000);
  const result = await sql<ClaimedBatch>`
    update mail_batches set attempts = attempts + 1, lease_until = ${leaseUntil}, updated_at = ${now}
     where id = (select id from mail_batches
                  where status = 'uploaded' and (lease_until is null or lease_until <= ${now})
                  order by uploaded_at nulls first, id
                  limit 1 for update skip locked)
    returning id, environment, lockbox_id, storage_key, attempts`.execute(db);
  return result.rows[0];
}

/** Keeps a claim's lease while its batch is still being ingested; false once the claim is no longer the batch's. */
export async function extendLease(db: Executor, claim: ClaimedBatch, leaseUntil: Date): Promise<boolean> {
  const result = await db
    .updateTable('mail_batches')
    .set({ lease_until: leaseUntil })
    .where('id', '=', claim.id)
    .where('status', '=', 'uploaded')
    .where('attempts', '=', claim.attempts)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Ends a claimed batch (ingested, refused, duplicate), only while the claim is still the
 * batch's latest: false when another ingestor took it over after the lease ran out, or it ended.
 * Locks the row, so the caller's transaction is the only one ending it.
 */
export async function finishBatch(
  db: Executor,
  claim: ClaimedBatch,
  outcome: {
    status: 'ingested' | 'refused' | 'duplicate';
    sha256?: string | null;
    sizeBytes?: number | null;
    refusalLine?: number | null;
    refusalReason?: string | null;
  },
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('mail_batches')
    .set({
      status: outcome.status,
      sha256: outcome.sha256 ?? null,
      ...(outcome.sizeBytes == null ? {} : { size_bytes: outcome.sizeBytes }),
      refusal_line: outcome.refusalLine ?? null,
      refusal_reason: outcome.refusalReason ?? null,
      ingested_at: outcome.status === 'ingested' ? now : null,
      lease_until: null,
      updated_at: now,
    })
    .where('id', '=', claim.id)
    .where('status', '=', 'uploaded')
    .where('attempts', '=', claim.attempts)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** An ingested batch of the lockbox with the same content, other than this one. */
export async function findIngestedWithContent(db: Executor, lockboxId: string, sha256: string, exceptId: string) {
  return db
    .selectFrom('mail_batches')
    .select('id')
    .where('lockbox_id', '=', lockboxId)
    .where('sha256', '=', sha256)
    .where('status', '=', 'ingested')
    .where('id', '<>', exceptId)
    .executeTakeFirst();
}

/** The lockbox a batch is for, with its payment source's nonprofit and financial account. */
export function findLockboxForIngestion(db: Executor, lockboxId: string) {
  return db
    .selectFrom('lockboxes')
    .innerJoin('payment_sources', 'payment_sources.id', 'lockboxes.payment_source_id')
    .select([
      'lockboxes.id',
      'lockboxes.environment',
      'lockboxes.organization_id',
      'lockboxes.payment_source_id',
      'lockboxes.location_id',
      'payment_sources.financial_account_id',
    ])
    .where('lockboxes.id', '=', lockboxId)
    .executeTakeFirstOrThrow();
}

/** The mail items the lockbox already has for these envelope ids: a second upload is a rescan. */
export async function findMailItemsByEnvelope(
  db: Executor,
  lockboxId: string,
  envelopeIds: readonly string[],
): Promise<Map<string, string>> {
  if (envelopeIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('mail_items')
    .select(['id', 'envelope_id'])
    .where('lockbox_id', '=', lockboxId)
    .where('envelope_id', 'in', envelopeIds)
    .execute();
  return new Map(rows.map((row) => [row.envelope_id, row.id]));
}

export async function insertMailItem(db: Executor, row: Insertable<MailItemsTable>): Promise<void> {
  await db.insertInto('mail_items').values(row).execute();
}

/** A new scan of the item; false when a scan with the same digest exists (the same images again). */
export async function insertScan(
  db: Executor,
  row: { file_id: string; mail_item_id: string; batch_id: string; digest: string },
): Promise<boolean> {
  const inserted = await db
    .insertInto('mail_item_scans')
    .values(row)
    .onConflict((oc) => oc.columns(['mail_item_id', 'digest']).doNothing())
    .returning('file_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function insertScanImages(
  db: Executor,
  rows: readonly {
    id: string;
    file_id: string;
    position: number;
    label: ScanImageLabel;
    storage_key: string;
    sha256: string;
    width: number;
    height: number;
  }[],
): Promise<void> {
  if (rows.length) await db.insertInto('scan_images').values(rows).execute();
}

export async function insertDeposit(
  db: Executor,
  row: {
    id: string;
    environment: Environment;
    organization_id: string;
    payment_source_id: string;
    financial_account_id: string;
    mail_item_id: string;
    amount: number;
    description: string;
    rail_details: Record<string, unknown>;
    settled_at: Date;
    bank_created_at: Date;
  },
): Promise<void> {
  await db
    .insertInto('deposits')
    .values({ ...row, status: 'complete', rail: 'check_deposit', rail_details: JSON.stringify(row.rail_details) })
    .execute();
}

/** Whether the organization already has a donation with this external id (they are short: collisions happen). */
export async function externalIdTaken(
  db: Executor,
  organizationId: string,
  environment: Environment,
  externalId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('donations')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertMailDonation(
  db: Executor,
  row: {
    id: string;
    environment: Environment;
    organization_id: string;
    external_id: string;
    payment_source_id: string;
    deposit_id: string;
    amount: number;
    purpose: string;
    note: string;
    primary_donor: DonorJson;
    mail_item_id: string;
    source_line: number;
    settlement_received_at: Date;
    settlement_settled_at: Date;
  },
): Promise<void> {
  const { amount, primary_donor, ...rest } = row;
  await db
    .insertInto('donations')
    .values({
      ...rest,
      amount_gross: amount,
      amount_net: amount,
      amount_fee: 0,
      primary_donor: JSON.stringify(primary_donor),
      payment_status: 'RECEIVED_IN_CHARIOT',
      canceled_at: null,
      dafpay_tracking_id: null,
    })
    .execute();
}
