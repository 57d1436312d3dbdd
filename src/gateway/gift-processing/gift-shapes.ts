import { z } from 'zod';
import type { DepositRow } from '../../gift-processing/deposits-service.js';
import type { MailItemView } from '../../gift-processing/mail-items-service.js';
import type { PaymentSourceRow } from '../../gift-processing/payment-sources-service.js';
import type { LockboxRow } from '../../gift-processing/lockboxes-service.js';
import type { AssignmentView, OptionView, PropertyView } from '../../gift-processing/properties-service.js';
import type { PostalAddressJson } from '../../db/schema-gift.js';
import { MAIL_ITEM_STATUSES } from '../../db/schema-gift.js';
import type { ApiVersion } from '../routing/versions.js';

/** The published shapes of gift processing's resources (spec/openapi/2026-04-01.yaml), and rows to them. */

const dateTime = z.string().datetime();

export const PostalAddress = z.object({
  line1: z.string(),
  line2: z.string().optional(),
  city: z.string(),
  state: z.string(),
  postal_code: z.string(),
  country: z.string(),
});

export const Lockbox = z.object({ id: z.string(), address: PostalAddress, created_at: dateTime, updated_at: dateTime });
/** 2026-01-15's Lockbox, which only a payment source carries: its address. */
const LockboxV2026_01 = z.object({ address: PostalAddress });

const paymentSourceFields = {
  id: z.string(),
  financial_account_id: z.string(),
  name: z.string(),
  source_type: z.enum(['manual', 'portal', 'lockbox', 'grantmaker']),
  financial_address: z
    .object({ ach: z.object({ institution_name: z.string(), account_number: z.string(), routing_number: z.string() }) })
    .optional(),
  created_at: dateTime,
  updated_at: dateTime,
};
export const PaymentSource = z.object({ ...paymentSourceFields, lockbox: Lockbox.optional() });
export const PaymentSourceV2026_01 = z.object({ ...paymentSourceFields, lockbox: LockboxV2026_01.optional() });

function address(stored: PostalAddressJson) {
  return {
    line1: stored.line1,
    line2: stored.line2,
    city: stored.city,
    state: stored.state,
    postal_code: stored.postal_code,
    country: stored.country,
  };
}

export function toLockbox(row: Pick<LockboxRow, 'id' | 'address' | 'created_at' | 'updated_at'>) {
  return { id: row.id, address: address(row.address), created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

export function toPaymentSource(row: PaymentSourceRow, version: ApiVersion) {
  const lockbox =
    row.lockbox_id === null || row.lockbox_address === null
      ? undefined
      : version === '2026-01-15'
        ? { address: address(row.lockbox_address) }
        : toLockbox({
            id: row.lockbox_id,
            address: row.lockbox_address,
            created_at: row.lockbox_created_at!,
            updated_at: row.lockbox_updated_at!,
          });
  return {
    id: row.id,
    financial_account_id: row.financial_account_id,
    name: row.name,
    source_type: row.source_type,
    // The ACH address money arrives at: the processing account's bank (docs/gift-processing.md, "The API").
    financial_address:
      row.ach_account_number === null || row.ach_routing_number === null
        ? undefined
        : { ach: { institution_name: row.bank_provider, account_number: row.ach_account_number, routing_number: row.ach_routing_number } },
    lockbox,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const MailItemStatus = z.enum(MAIL_ITEM_STATUSES);
export const MailItem = z.object({
  id: z.string(),
  lockbox_id: z.string(),
  status: MailItemStatus,
  received_at: dateTime,
  scans: z.array(z.object({ file_id: z.string(), created_at: dateTime })).describe('Newest first'),
  created_at: dateTime,
  updated_at: dateTime,
});

export function toMailItem(row: MailItemView) {
  return {
    id: row.id,
    lockbox_id: row.lockbox_id,
    status: row.status,
    received_at: row.received_at.toISOString(),
    scans: row.scans.map((s) => ({ file_id: s.file_id, created_at: s.created_at.toISOString() })),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const PropertyType = z.enum(['text', 'enum', 'user', 'boolean', 'date']);
export const ResourceType = z.enum(['donation', 'deposit']);
export const PropertyValue = z.object({
  type: PropertyType,
  text_value: z.string().optional(),
  enum_value_id: z.string().optional(),
  user_value_id: z.string().optional(),
  boolean_value: z.boolean().optional(),
  date_value: z.string().optional().describe('RFC 3339 date-time'),
  empty: z.boolean().optional(),
});
export const PropertyAssignment = z.object({ property_id: z.string(), value: PropertyValue });

export function toAssignments(list: readonly AssignmentView[]) {
  return list.map((a) => ({ property_id: a.property_id, value: a.value }));
}

export const PropertyOptionValue = z.object({ id: z.string(), name: z.string(), description: z.string().optional() });
export const Property = z.object({
  id: z.string(),
  name: z.string(),
  resource_type: ResourceType,
  property_type: PropertyType,
  options: z.array(PropertyOptionValue).optional().describe('The first 25 options of an enum or user property'),
  total_option_count: z.number().int().optional(),
});

export function toOption(row: OptionView) {
  return { id: row.id, name: row.name, description: row.description ?? undefined };
}

export function toProperty(row: PropertyView) {
  return {
    id: row.id,
    name: row.name,
    resource_type: row.resource_type,
    property_type: row.property_type,
    options: row.options?.map(toOption),
    total_option_count: row.total_option_count,
  };
}

const Transfer = z.object({
  amount: z.number().int(),
  currency: z.string(),
  financial_account_id: z.string(),
  description: z.string().optional(),
  inbound_account_transfer: z.object({ created_at: dateTime }).optional(),
  inbound_ach_transfer: z
    .object({
      standard_entry_class_code: z.string().optional(),
      company_entry_description: z.string().optional(),
      originator_routing_number: z.string().optional(),
      originator_company_name: z.string().optional(),
      trace_number: z.string().optional(),
      effective_date: dateTime.optional(),
      status: z.enum(['pending', 'declined', 'accepted', 'returned']).optional(),
    })
    .optional(),
  check_deposit: z
    .object({
      auxiliary_on_us: z.string().optional(),
      routing_number: z.string().optional(),
      submitted_at: dateTime.optional(),
      status: z.enum(['pending', 'deposited', 'rejected', 'returned']).optional(),
    })
    .optional(),
});

export const Deposit = z.object({
  id: z.string(),
  payment_source_id: z.string(),
  settled_at: dateTime.optional(),
  returned_at: dateTime.optional(),
  status: z.enum(['pending', 'complete', 'failed']),
  transfer: Transfer,
  properties: z.array(PropertyAssignment),
  created_at: dateTime,
  updated_at: dateTime,
  bank_created_at: dateTime.optional(),
});

/** The string members of a stored subhash that the published one has: anything else stored is not served. */
function pick(details: Record<string, unknown>, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) if (typeof details[key] === 'string') out[key] = details[key];
  return out;
}

/** The deposit's Transfer: its rail's subhash from deposits.rail and rail_details. */
function transferOf(row: DepositRow) {
  const d = row.rail_details ?? {};
  return {
    amount: Number(row.amount),
    currency: row.currency,
    financial_account_id: row.financial_account_id,
    description: row.description ?? undefined,
    check_deposit: row.rail === 'check_deposit' ? pick(d, ['auxiliary_on_us', 'routing_number', 'submitted_at', 'status']) : undefined,
    inbound_ach_transfer:
      row.rail === 'inbound_ach_transfer'
        ? pick(d, [
            'standard_entry_class_code',
            'company_entry_description',
            'originator_routing_number',
            'originator_company_name',
            'trace_number',
            'effective_date',
            'status',
          ])
        : undefined,
    inbound_account_transfer:
      row.rail === 'inbound_account_transfer'
        ? { created_at: typeof d.created_at === 'string' ? d.created_at : row.created_at.toISOString() }
        : undefined,
  };
}

export function toDeposit(row: DepositRow) {
  return {
    id: row.id,
    payment_source_id: row.payment_source_id,
    settled_at: row.settled_at?.toISOString(),
    returned_at: row.returned_at?.toISOString(),
    status: row.status,
    transfer: transferOf(row),
    properties: toAssignments(row.properties),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    bank_created_at: row.bank_created_at?.toISOString(),
  };
}
