import crypto from 'node:crypto';
import path from 'node:path';
import sharp from 'sharp';
import { addUser } from '../../src/accounts/service.js';
import { addMember } from '../../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { formatEin } from '../../src/accounts/ein.js';
import type { Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import type { Role } from '../../src/db/schema.js';
import type { DepositStatus, MailItemStatus, ScanImageLabel } from '../../src/db/schema-gift.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { giftParties, type TestLockbox } from './gift.js';

/**
 * The dashboard's gift-processing pages' fixtures (docs/gift-processing.md, "On the dashboard"):
 * a nonprofit with a lockbox and a signed-in user per role, TIFF scans drawn from an SVG of a
 * check, and mail items with their scans, donations and deposit written straight into the
 * tables and the app's folder storage, as an ingested batch would leave them.
 */

export type GiftUser = { email: string; password: string; id: string };

/** giftParties' nonprofit, with one user per role, and its EIN as the dashboard shows it (12-3456789). */
export async function giftStaff(db: Db) {
  const parties = await giftParties(db);
  const org = await db.selectFrom('organizations').select('ein').where('id', '=', parties.nonprofit.id).executeTakeFirstOrThrow();
  const ein = formatEin(org.ein);
  const suffix = crypto.randomBytes(3).toString('hex');
  const users = {} as Record<Role, GiftUser>;
  for (const role of ['owner', 'admin', 'member', 'read_only'] as const) {
    const email = `gift-${role.replace('_', '')}-${suffix}@example.org`;
    const password = `pw-${role}-${suffix}`;
    const user = await addUser(db, { email, password }, MIN_PASSWORD_PARAMS);
    await addMember(db, { org: ein, email, role });
    users[role] = { email, password, id: user.id };
  }
  return { ...parties, ein, users };
}

/** The storage the test server's app uses (a folder under its data directory). */
export function appStorage(dataDir: string): FolderStorage {
  return new FolderStorage(path.join(dataDir, 'objects'));
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A TIFF of a check: a pale green slip, a blue amount box with the amount in large red digits, the payer's name. */
export function checkTiff(amount: string, payer = 'Ada Donor', size = { width: 1200, height: 540 }): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" viewBox="0 0 1200 540">
  <rect width="1200" height="540" fill="#e4f4e8"/>
  <rect x="20" y="20" width="1160" height="500" fill="none" stroke="#1d6b3a" stroke-width="8"/>
  <text x="60" y="110" font-family="sans-serif" font-size="48" fill="#1d3a6b">${escape(payer)}</text>
  <text x="60" y="260" font-family="sans-serif" font-size="34" fill="#222">Pay to the order of Riverside Food Bank</text>
  <rect x="820" y="190" width="320" height="110" fill="#cfe0ff" stroke="#1d3a6b" stroke-width="6"/>
  <text x="840" y="275" font-family="sans-serif" font-size="72" font-weight="bold" fill="#c01818">${escape(amount)}</text>
  <rect x="60" y="420" width="700" height="40" fill="#333"/>
</svg>`;
  return sharp(Buffer.from(svg)).tiff({ compression: 'lzw' }).toBuffer();
}

/** An envelope's TIFF: a buff rectangle with a stamp and an address. */
export function envelopeTiff(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="420">
  <rect width="900" height="420" fill="#f3e3c3"/>
  <rect x="760" y="30" width="100" height="120" fill="#b02a6b"/>
  <text x="300" y="240" font-family="sans-serif" font-size="36" fill="#222">PO Box, Newark NJ 07101</text>
</svg>`;
  return sharp(Buffer.from(svg)).tiff().toBuffer();
}

export interface SeededMailItem {
  id: string;
  imageIds: string[];
  donationIds: string[];
  depositId: string | undefined;
}

/**
 * A mail item of the lockbox with one scan of `images` (stored as TIFFs), a donation per
 * check and, when `deposit` is given, a deposit of their sum.
 */
export async function seedMailItem(
  db: Db,
  storage: FolderStorage,
  input: {
    nonprofitId: string;
    providerId: string;
    lockbox: TestLockbox;
    status?: MailItemStatus;
    receivedAt?: Date;
    createdAt?: Date;
    reviewLine?: number;
    reviewReason?: string;
    images?: { label: ScanImageLabel; tiff: Buffer }[];
    donations?: { amount: number; donor: string; memo: string }[];
    deposit?: { status?: DepositStatus; settledAt?: Date | null };
  },
): Promise<SeededMailItem> {
  const environment = input.lockbox.environment;
  const batchId = prefixedId('batch');
  const itemId = prefixedId('mail');
  const fileId = prefixedId('file');
  const createdAt = input.createdAt ?? new Date();
  await db
    .insertInto('mail_batches')
    .values({
      id: batchId,
      environment,
      provider_organization_id: input.providerId,
      lockbox_id: input.lockbox.id,
      storage_key: `batches/${batchId}.zip`,
      upload_expires_at: new Date(Date.now() + 900_000),
      status: 'ingested',
      ingested_at: createdAt,
      uploaded_at: createdAt,
      lease_until: null,
      sha256: null,
      refusal_line: null,
      refusal_reason: null,
    })
    .execute();
  await db
    .insertInto('mail_items')
    .values({
      id: itemId,
      environment,
      organization_id: input.nonprofitId,
      lockbox_id: input.lockbox.id,
      batch_id: batchId,
      envelope_id: `env-${crypto.randomBytes(4).toString('hex')}`,
      status: input.status ?? 'processed',
      review_line: input.reviewLine ?? null,
      review_reason: input.reviewReason ?? null,
      received_at: input.receivedAt ?? createdAt,
      created_at: createdAt,
    })
    .execute();
  const imageIds: string[] = [];
  const images = input.images ?? [];
  if (images.length) {
    await db
      .insertInto('mail_item_scans')
      .values({
        file_id: fileId,
        mail_item_id: itemId,
        batch_id: batchId,
        digest: crypto.randomBytes(32).toString('hex'),
        created_at: createdAt,
      })
      .execute();
    for (const [position, image] of images.entries()) {
      const id = prefixedId('image');
      const key = `scans/${batchId}/${id}.tif`;
      await storage.put(key, image.tiff);
      const meta = await sharp(image.tiff)
        .metadata()
        .catch(() => ({ width: undefined, height: undefined }));
      await db
        .insertInto('scan_images')
        .values({
          id,
          file_id: fileId,
          position,
          label: image.label,
          storage_key: key,
          sha256: crypto.createHash('sha256').update(image.tiff).digest('hex'),
          width: meta.width ?? null,
          height: meta.height ?? null,
        })
        .execute();
      imageIds.push(id);
    }
  }
  const donations = input.donations ?? [];
  const depositId = input.deposit && donations.length ? prefixedId('deposit') : undefined;
  if (depositId) {
    await db
      .insertInto('deposits')
      .values({
        id: depositId,
        environment,
        organization_id: input.nonprofitId,
        payment_source_id: input.lockbox.paymentSourceId,
        financial_account_id: input.lockbox.financialAccountId,
        mail_item_id: itemId,
        status: input.deposit!.status ?? 'complete',
        amount: donations.reduce((sum, d) => sum + d.amount, 0),
        rail: 'check_deposit',
        rail_details: '{}',
        description: null,
        settled_at: input.deposit!.settledAt === undefined ? createdAt : input.deposit!.settledAt,
        returned_at: null,
        bank_created_at: null,
        created_at: createdAt,
      })
      .execute();
  }
  const donationIds: string[] = [];
  for (const [line, d] of donations.entries()) {
    const id = prefixedId('donation');
    const [first, ...rest] = d.donor.split(' ');
    await db
      .insertInto('donations')
      .values({
        id,
        environment,
        organization_id: input.nonprofitId,
        external_id: id,
        payment_source_id: input.lockbox.paymentSourceId,
        deposit_id: depositId ?? null,
        dafpay_tracking_id: null,
        amount_gross: d.amount,
        amount_net: d.amount,
        amount_fee: 0,
        note: d.memo,
        primary_donor: JSON.stringify({ first_name: first, last_name: rest.join(' ') }),
        payment_status: 'RECEIVED_IN_CHARIOT',
        canceled_at: null,
        mail_item_id: itemId,
        source_line: line + 2,
        created_at: createdAt,
      })
      .execute();
    donationIds.push(id);
  }
  return { id: itemId, imageIds, donationIds, depositId };
}

/** A newer scan of a mail item (a rescan: the same envelope uploaded again), with `images` stored as TIFFs; returns the image ids. */
export async function seedRescan(
  db: Db,
  storage: FolderStorage,
  mailItemId: string,
  images: { label: ScanImageLabel; tiff: Buffer }[],
  createdAt = new Date(),
): Promise<string[]> {
  const item = await db.selectFrom('mail_items').select('batch_id').where('id', '=', mailItemId).executeTakeFirstOrThrow();
  const fileId = prefixedId('file');
  await db
    .insertInto('mail_item_scans')
    .values({
      file_id: fileId,
      mail_item_id: mailItemId,
      batch_id: item.batch_id,
      digest: crypto.randomBytes(32).toString('hex'),
      created_at: createdAt,
    })
    .execute();
  const ids: string[] = [];
  for (const [position, image] of images.entries()) {
    const id = prefixedId('image');
    const key = `scans/${item.batch_id}/${id}.tif`;
    await storage.put(key, image.tiff);
    await db
      .insertInto('scan_images')
      .values({
        id,
        file_id: fileId,
        position,
        label: image.label,
        storage_key: key,
        sha256: crypto.createHash('sha256').update(image.tiff).digest('hex'),
        width: null,
        height: null,
      })
      .execute();
    ids.push(id);
  }
  return ids;
}

/**
 * A tiny TIFF whose header claims a `side` × `side` bilevel image (a decompression bomb's
 * shape): the pixel limit refuses it before any pixel is decoded.
 */
export function hugeTiffHeader(side = 50_000): Buffer {
  const entries: [tag: number, type: number, value: number][] = [
    [256, 4, side], // ImageWidth
    [257, 4, side], // ImageLength
    [258, 3, 1], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 0], // Photometric: white is zero
    [273, 4, 8 + 2 + 10 * 12 + 4], // StripOffsets: right after the IFD
    [277, 3, 1], // SamplesPerPixel
    [278, 4, side], // RowsPerStrip
    [279, 4, 16], // StripByteCounts (the file holds far fewer than it claims)
    [284, 3, 1], // PlanarConfiguration
  ];
  const ifd = Buffer.alloc(2 + entries.length * 12 + 4);
  ifd.writeUInt16LE(entries.length, 0);
  entries.forEach(([tag, type, value], i) => {
    const at = 2 + i * 12;
    ifd.writeUInt16LE(tag, at);
    ifd.writeUInt16LE(type, at + 2);
    ifd.writeUInt32LE(1, at + 4);
    if (type === 3) ifd.writeUInt16LE(value, at + 8);
    else ifd.writeUInt32LE(value, at + 8);
  });
  const header = Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0]);
  return Buffer.concat([header, ifd, Buffer.alloc(16)]);
}

/** A property of the nonprofit (with enum options when given) and, optionally, its value on some resources. */
export async function seedProperty(
  db: Db,
  input: {
    nonprofitId: string;
    environment?: 'sandbox' | 'production';
    name: string;
    resourceType: 'donation' | 'deposit';
    type: 'text' | 'enum' | 'boolean' | 'date' | 'user';
    options?: string[];
    values?: { resourceId: string; value: Record<string, unknown> }[];
  },
): Promise<{ id: string; optionIds: string[] }> {
  const id = prefixedId('prop');
  await db
    .insertInto('properties')
    .values({
      id,
      environment: input.environment ?? 'sandbox',
      organization_id: input.nonprofitId,
      name: input.name,
      resource_type: input.resourceType,
      property_type: input.type,
    })
    .execute();
  const optionIds: string[] = [];
  for (const [position, name] of (input.options ?? []).entries()) {
    const optionId = prefixedId('propopt');
    await db.insertInto('property_options').values({ id: optionId, property_id: id, name, description: null, position }).execute();
    optionIds.push(optionId);
  }
  for (const v of input.values ?? []) {
    await db
      .insertInto('property_assignments')
      .values({ property_id: id, resource_type: input.resourceType, resource_id: v.resourceId, value: JSON.stringify(v.value) })
      .execute();
  }
  return { id, optionIds };
}
