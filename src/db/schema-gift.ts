import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of gift processing (migration 20261129220000; docs/gift-processing.md). donations is in schema.ts. */

/** Cents in a bigint column: read as pg's text, written as a safe integer. */
type Cents = ColumnType<string, number, number>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

export type PaymentSourceType = 'manual' | 'portal' | 'lockbox' | 'grantmaker';

/** The published PostalAddress, as stored. */
export interface PostalAddressJson {
  line1: string;
  line2?: string;
  city: string;
  state: string;
  postal_code: string;
  country: string;
}

export interface PaymentSourcesTable {
  id: string;
  environment: Environment;
  organization_id: string;
  financial_account_id: string;
  name: string;
  source_type: PaymentSourceType;
  ach_account_number: string | null;
  ach_routing_number: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface LockboxRequestsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  provider_organization_id: string;
  created_at: CreatedAt;
  fulfilled_at: Date | null;
  lockbox_id: string | null;
}

export interface LockboxesTable {
  id: string;
  environment: Environment;
  organization_id: string;
  provider_organization_id: string;
  location_id: string;
  address: Json<PostalAddressJson>;
  payment_source_id: string;
  request_id: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export const MAIL_BATCH_STATUSES = ['awaiting_upload', 'uploaded', 'ingested', 'refused', 'duplicate', 'expired'] as const;
export type MailBatchStatus = (typeof MAIL_BATCH_STATUSES)[number];

export interface MailBatchesTable {
  id: string;
  environment: Environment;
  provider_organization_id: string;
  lockbox_id: string;
  storage_key: string;
  upload_expires_at: Date;
  status: Generated<MailBatchStatus>;
  size_bytes: ColumnType<string | null, number | null | undefined, number | null>;
  sha256: string | null;
  refusal_line: number | null;
  refusal_reason: string | null;
  attempts: Generated<number>;
  lease_until: Date | null;
  uploaded_at: Date | null;
  ingested_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export const MAIL_ITEM_STATUSES = ['processing', 'needs_review', 'processed', 'rejected'] as const;
export type MailItemStatus = (typeof MAIL_ITEM_STATUSES)[number];

export interface MailItemsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  lockbox_id: string;
  batch_id: string;
  envelope_id: string;
  status: MailItemStatus;
  review_line: number | null;
  review_reason: string | null;
  received_at: Date;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface MailItemScansTable {
  file_id: string;
  mail_item_id: string;
  batch_id: string;
  digest: string;
  created_at: CreatedAt;
}

export const SCAN_IMAGE_LABELS = ['check_front', 'check_back', 'envelope', 'correspondence'] as const;
export type ScanImageLabel = (typeof SCAN_IMAGE_LABELS)[number];

export interface ScanImagesTable {
  id: string;
  file_id: string;
  position: number;
  label: ScanImageLabel;
  storage_key: string;
  sha256: string;
  width: number | null;
  height: number | null;
  created_at: CreatedAt;
}

export type DepositStatus = 'pending' | 'complete' | 'failed';
export type DepositRail = 'check_deposit' | 'inbound_ach_transfer' | 'inbound_account_transfer';

export interface DepositsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  payment_source_id: string;
  financial_account_id: string;
  mail_item_id: string | null;
  status: DepositStatus;
  amount: Cents;
  currency: Generated<string>;
  description: string | null;
  rail: DepositRail;
  /** The published rail subhash's fields (CheckDeposit, InboundAchTransfer, …), as served. */
  rail_details: ColumnType<Record<string, unknown>, string | undefined, string>;
  settled_at: Date | null;
  returned_at: Date | null;
  bank_created_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type PropertyResourceType = 'donation' | 'deposit';
export type PropertyType = 'text' | 'enum' | 'user' | 'boolean' | 'date';

export interface PropertiesTable {
  id: string;
  environment: Environment;
  organization_id: string;
  name: string;
  resource_type: PropertyResourceType;
  property_type: PropertyType;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PropertyOptionsTable {
  id: string;
  property_id: string;
  name: string;
  description: string | null;
  position: number;
  created_at: CreatedAt;
}

/** The published PropertyValue. */
export interface PropertyValueJson {
  type: PropertyType;
  text_value?: string;
  enum_value_id?: string;
  user_value_id?: string;
  boolean_value?: boolean;
  date_value?: string;
  empty?: boolean;
}

export interface PropertyAssignmentsTable {
  property_id: string;
  resource_type: PropertyResourceType;
  resource_id: string;
  value: Json<PropertyValueJson>;
  updated_at: UpdatedAt;
}

/** The donation columns gift processing added (migration 20261129220000). */
export interface DonationGiftColumns {
  mail_item_id: string | null;
  source_line: number | null;
  individual_gift_amount: ColumnType<string | null, number | null | undefined, number | null>;
  joint_donor: NullableJson<Record<string, unknown>>;
  initiation: NullableJson<Record<string, unknown>>;
  donor_advised_fund_grant: NullableJson<Record<string, unknown>>;
  platform: NullableJson<Record<string, unknown>>;
  corporate_match: NullableJson<Record<string, unknown>>;
  settlement_received_at: Date | null;
  settlement_settled_at: Date | null;
}

export const DONATION_GIFT_COLUMNS = [
  'mail_item_id',
  'source_line',
  'individual_gift_amount',
  'joint_donor',
  'initiation',
  'donor_advised_fund_grant',
  'platform',
  'corporate_match',
  'settlement_received_at',
  'settlement_settled_at',
] as const satisfies readonly (keyof DonationGiftColumns)[];

export interface GiftDatabase {
  payment_sources: PaymentSourcesTable;
  lockbox_requests: LockboxRequestsTable;
  lockboxes: LockboxesTable;
  mail_batches: MailBatchesTable;
  mail_items: MailItemsTable;
  mail_item_scans: MailItemScansTable;
  scan_images: ScanImagesTable;
  deposits: DepositsTable;
  properties: PropertiesTable;
  property_options: PropertyOptionsTable;
  property_assignments: PropertyAssignmentsTable;
}

export const GIFT_TABLE_COLUMNS = {
  payment_sources: columns<PaymentSourcesTable>()([
    'id',
    'environment',
    'organization_id',
    'financial_account_id',
    'name',
    'source_type',
    'ach_account_number',
    'ach_routing_number',
    'created_at',
    'updated_at',
  ]),
  lockbox_requests: columns<LockboxRequestsTable>()([
    'id',
    'environment',
    'organization_id',
    'provider_organization_id',
    'created_at',
    'fulfilled_at',
    'lockbox_id',
  ]),
  lockboxes: columns<LockboxesTable>()([
    'id',
    'environment',
    'organization_id',
    'provider_organization_id',
    'location_id',
    'address',
    'payment_source_id',
    'request_id',
    'created_at',
    'updated_at',
  ]),
  mail_batches: columns<MailBatchesTable>()([
    'id',
    'environment',
    'provider_organization_id',
    'lockbox_id',
    'storage_key',
    'upload_expires_at',
    'status',
    'size_bytes',
    'sha256',
    'refusal_line',
    'refusal_reason',
    'attempts',
    'lease_until',
    'uploaded_at',
    'ingested_at',
    'created_at',
    'updated_at',
  ]),
  mail_items: columns<MailItemsTable>()([
    'id',
    'environment',
    'organization_id',
    'lockbox_id',
    'batch_id',
    'envelope_id',
    'status',
    'review_line',
    'review_reason',
    'received_at',
    'created_at',
    'updated_at',
  ]),
  mail_item_scans: columns<MailItemScansTable>()(['file_id', 'mail_item_id', 'batch_id', 'digest', 'created_at']),
  scan_images: columns<ScanImagesTable>()(['id', 'file_id', 'position', 'label', 'storage_key', 'sha256', 'width', 'height', 'created_at']),
  deposits: columns<DepositsTable>()([
    'id',
    'environment',
    'organization_id',
    'payment_source_id',
    'financial_account_id',
    'mail_item_id',
    'status',
    'amount',
    'currency',
    'description',
    'rail',
    'rail_details',
    'settled_at',
    'returned_at',
    'bank_created_at',
    'created_at',
    'updated_at',
  ]),
  properties: columns<PropertiesTable>()([
    'id',
    'environment',
    'organization_id',
    'name',
    'resource_type',
    'property_type',
    'created_at',
    'updated_at',
  ]),
  property_options: columns<PropertyOptionsTable>()(['id', 'property_id', 'name', 'description', 'position', 'created_at']),
  property_assignments: columns<PropertyAssignmentsTable>()(['property_id', 'resource_type', 'resource_id', 'value', 'updated_at']),
};
