import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { ScanImageLabel } from '../db/schema-gift.js';
import { externalLedgerAccount } from '../grantmaking/platform-accounts.js';
import { processingLedgerAccount } from '../grantmaking/provisioning.js';
import { postTransfer } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { scanDigest, type CheckedImage } from './batch-images.js';
import { depositTotal, type PlannedEnvelope } from './batch-index.js';
import {
  externalIdTaken,
  findMailItemsByEnvelope,
  insertDeposit,
  insertMailDonation,
  insertMailItem,
  insertScan,
  insertScanImages,
  type ClaimedBatch,
  type findLockboxForIngestion,
} from './mail-batches-repository.js';

/** An image of an envelope's scan, stored at its key. */
export interface StoredImage extends CheckedImage {
  key: string;
  label: ScanImageLabel;
}

export interface WriteInput {
  claim: ClaimedBatch;
  lockbox: Awaited<ReturnType<typeof findLockboxForIngestion>>;
  envelopes: readonly PlannedEnvelope[];
  /** Per envelope, in the plan's order. */
  images: readonly StoredImage[][];
  now: Date;
}

export interface WriteSummary {
  mailItems: number;
  rescans: number;
  donations: number;
  deposits: number;
  /** Cents deposited in all. */
  amount: number;
  /** Images of a rescan whose scan was already there: stored for nothing, removed after the commit. */
  unusedKeys: string[];
}

/** A donation's external id: short and numeric, as the published examples show, and not yet used by the nonprofit. */
async function externalId(trx: Trx, input: WriteInput): Promise<string> {
  for (;;) {
    const id = String(crypto.randomInt(10_000_000, 99_999_999));
    if (!(await externalIdTaken(trx, input.lockbox.organization_id, input.lockbox.environment, id))) return id;
  }
}

/** A processed envelope's checks: one deposit of their sum, a donation each, the ledger transfer, the events. */
async function depositChecks(trx: Trx, input: WriteInput, envelope: PlannedEnvelope, mailItemId: string): Promise<number> {
  const { lockbox, now } = input;
  const amount = depositTotal(envelope);
  const depositId = prefixedId('deposit');
  const only = envelope.checks.length === 1 ? envelope.checks[0]! : undefined;
  await insertDeposit(trx, {
    id: depositId,
    environment: lockbox.environment,
    organization_id: lockbox.organization_id,
    payment_source_id: lockbox.payment_source_id,
    financial_account_id: lockbox.financial_account_id,
    mail_item_id: mailItemId,
    amount,
    description: `Checks of envelope ${envelope.envelopeId}`,
    rail_details: {
      submitted_at: now.toISOString(),
      status: 'deposited',
      ...(only?.checkNumber ? { auxiliary_on_us: only.checkNumber } : {}),
      ...(only?.routingNumber ? { routing_number: only.routingNumber } : {}),
    },
    settled_at: now,
    bank_created_at: now,
  });
  for (const check of envelope.checks) {
    const donationId = prefixedId('donation');
    await insertMailDonation(trx, {
      id: donationId,
      environment: lockbox.environment,
      organization_id: lockbox.organization_id,
      external_id: await externalId(trx, input),
      payment_source_id: lockbox.payment_source_id,
      deposit_id: depositId,
      amount: check.amount,
      purpose: check.purpose,
      note: check.memo,
      primary_donor: check.donor,
      mail_item_id: mailItemId,
      source_line: check.line,
      settlement_received_at: envelope.receivedAt,
      settlement_settled_at: now,
    });
    await emitEvent(trx, {
      environment: lockbox.environment,
      organizationId: lockbox.organization_id,
      category: 'donation.created',
      objectId: donationId,
      objectType: 'donation',
    });
  }
  await postTransfer(trx, {
    environment: lockbox.environment,
    kind: 'check_deposit',
    reference: { type: 'deposit', id: depositId },
    entries: [
      { accountId: await externalLedgerAccount(trx, lockbox.environment), amount: -amount },
      { accountId: await processingLedgerAccount(trx, lockbox.organization_id, lockbox.environment), amount },
    ],
  });
  await emitEvent(trx, {
    environment: lockbox.environment,
    organizationId: lockbox.organization_id,
    category: 'deposit.created',
    objectId: depositId,
    objectType: 'deposit',
  });
  return amount;
}

/**
 * Writes a validated batch in one transaction (docs/gift-processing.md, "What a batch becomes"):
 * `fence` runs first, holding the batch row, and throws when the claim is no longer this one's.
 * An envelope already known for the lockbox is a rescan: a new scan unless the same images are
 * there already, and never a donation or deposit again.
 */
export function writeBatch(db: Db, input: WriteInput, fence: (trx: Trx) => Promise<void>): Promise<WriteSummary> {
  return inTransaction(db, async (trx) => {
    await fence(trx);
    const { claim, lockbox } = input;
    const summary: WriteSummary = { mailItems: 0, rescans: 0, donations: 0, deposits: 0, amount: 0, unusedKeys: [] };
    const known = await findMailItemsByEnvelope(
      trx,
      lockbox.id,
      input.envelopes.map((e) => e.envelopeId),
    );
    for (const [index, envelope] of input.envelopes.entries()) {
      const images = input.images[index]!;
      let mailItemId = known.get(envelope.envelopeId);
      const rescan = mailItemId !== undefined;
      if (mailItemId === undefined) {
        mailItemId = prefixedId('mail');
        await insertMailItem(trx, {
          id: mailItemId,
          environment: lockbox.environment,
          organization_id: lockbox.organization_id,
          lockbox_id: lockbox.id,
          batch_id: claim.id,
          envelope_id: envelope.envelopeId,
          status: envelope.status,
          review_line: envelope.reviewLine,
          review_reason: envelope.reviewReason,
          received_at: envelope.receivedAt,
        });
        summary.mailItems += 1;
      } else {
        summary.rescans += 1;
      }
      const fileId = prefixedId('file');
      const added = await insertScan(trx, {
        file_id: fileId,
        mail_item_id: mailItemId,
        batch_id: claim.id,
        digest: scanDigest(images.map((image) => image.sha256)),
      });
      if (added) {
        await insertScanImages(
          trx,
          images.map((image, position) => ({
            id: prefixedId('image'),
            file_id: fileId,
            position,
            label: image.label,
            storage_key: image.key,
            sha256: image.sha256,
            width: image.width,
            height: image.height,
          })),
        );
      } else {
        summary.unusedKeys.push(...images.map((image) => image.key));
      }
      if (rescan || envelope.status !== 'processed' || envelope.checks.length === 0) continue;
      summary.amount += await depositChecks(trx, input, envelope, mailItemId);
      summary.deposits += 1;
      summary.donations += envelope.checks.length;
    }
    return summary;
  });
}
