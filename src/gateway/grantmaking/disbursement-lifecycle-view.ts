import { z } from 'zod';
import { REJECTION_REASONS } from '../../db/schema-grantmaking.js';
import { organizationsByIds, type OrganizationRecord } from '../../directory/organization-service.js';
import type { DisbursementRecord, DisbursementTransferRow } from '../../grantmaking/disbursements-service.js';
import { Organization, organizationView } from '../organizations/views.js';

/**
 * What both published versions show alike of a disbursement's life (docs/grantmaking.md, "Rails
 * and transfers"): who approved, canceled or stopped it, its transfers, and the recipient when
 * `includes=organization` asks for it.
 */

const timestamp = z.string().datetime();
const PostalAddress = z.object({
  line1: z.string(),
  line2: z.string().optional(),
  city: z.string(),
  state: z.string(),
  postal_code: z.string(),
  country: z.string(),
});
const CheckTransfer = z.object({
  transfer_id: z.string(),
  amount: z.number().int(),
  status: z.enum(['issued', 'deposited', 'stopped', 'returned']),
  memo: z.string(),
  check_number: z.string(),
  recipient_name: z.string(),
  mailing_address: PostalAddress,
  submitted_at: timestamp,
  stopped_at: timestamp.optional(),
  deposited_at: timestamp.optional(),
  created_at: timestamp,
  updated_at: timestamp,
});
const AchTransfer = z.object({
  transfer_id: z.string(),
  amount: z.number().int(),
  status: z.enum(['submitted', 'completed', 'returned']),
  direction: z.literal('credit'),
  standard_entry_class_code: z.literal('corporate_credit_or_debit'),
  submitted_at: timestamp,
  settled_at: timestamp.optional(),
  returned_at: timestamp.optional(),
  created_at: timestamp,
  updated_at: timestamp,
});
const AccountTransfer = z.object({
  transfer_id: z.string(),
  amount: z.number().int(),
  status: z.enum(['pending_approval', 'complete']),
  created_at: timestamp,
  updated_at: timestamp,
});
/** One payment attempt: exactly one of the rails' keys. */
export const DisbursementTransfer = z.object({
  check_transfer: CheckTransfer.optional(),
  ach_transfer: AchTransfer.optional(),
  account_transfer: AccountTransfer.optional(),
});

export const LifecycleFields = {
  organization: Organization.optional(),
  approval: z.object({ approved_by: z.string().optional(), approved_at: timestamp }).optional(),
  cancelation: z.object({ canceled_by: z.string().optional(), canceled_at: timestamp }).optional(),
  stop: z.object({ stopped_by: z.string().optional(), stopped_at: timestamp }).optional(),
  verification: z.object({ verified_at: timestamp }).optional(),
  rejection: z.object({ reason: z.enum(REJECTION_REASONS), rejected_at: timestamp }).optional(),
  transfers: z.array(DisbursementTransfer),
};

const iso = (at: Date | null) => (at ? at.toISOString() : undefined);

/** A transfer as the published DisbursementTransfer: the one key of its rail, unset times left out. */
function toTransfer(t: DisbursementTransferRow) {
  const common = { transfer_id: t.id, amount: Number(t.amount), status: t.status };
  const times = { created_at: t.created_at.toISOString(), updated_at: t.updated_at.toISOString() };
  if (t.rail === 'account') return { account_transfer: { ...common, ...times } };
  if (t.rail === 'ach')
    return {
      ach_transfer: {
        ...common,
        direction: 'credit',
        standard_entry_class_code: 'corporate_credit_or_debit',
        submitted_at: t.created_at.toISOString(),
        ...(t.completed_at ? { settled_at: iso(t.completed_at) } : {}),
        ...(t.returned_at ? { returned_at: iso(t.returned_at) } : {}),
        ...times,
      },
    };
  return {
    check_transfer: {
      ...common,
      memo: t.memo!,
      check_number: t.check_number!,
      recipient_name: t.recipient_name!,
      mailing_address: t.mailing_address!,
      // Mailed when issued: the check is handed to the carrier as it opens.
      submitted_at: t.created_at.toISOString(),
      ...(t.stopped_at ? { stopped_at: iso(t.stopped_at) } : {}),
      ...(t.completed_at ? { deposited_at: iso(t.completed_at) } : {}),
      ...times,
    },
  };
}

/** Who acted, as published: a user's e-mail; an API key or a client is left out. */
function by(record: DisbursementRecord, key: string, actor: string | null) {
  const email = actor === null ? undefined : record.actorEmails.get(actor);
  return email !== undefined ? { [key]: email } : {};
}

/** The lifecycle fields of `record` (LifecycleFields), the recipient's Organization when given. */
export function lifecycleOf(record: DisbursementRecord, organization?: OrganizationRecord) {
  const { row } = record;
  return {
    ...(organization ? { organization: organizationView(organization) } : {}),
    ...(row.approved_at ? { approval: { ...by(record, 'approved_by', row.approved_by), approved_at: iso(row.approved_at) } } : {}),
    ...(row.canceled_at ? { cancelation: { ...by(record, 'canceled_by', row.canceled_by), canceled_at: iso(row.canceled_at) } } : {}),
    ...(row.stopped_at ? { stop: { ...by(record, 'stopped_by', row.stopped_by), stopped_at: iso(row.stopped_at) } } : {}),
    ...(row.verified_at ? { verification: { verified_at: row.verified_at.toISOString() } } : {}),
    ...(row.rejection_reason !== null && row.rejected_at !== null
      ? { rejection: { reason: row.rejection_reason, rejected_at: row.rejected_at.toISOString() } }
      : {}),
    transfers: record.transfers.map(toTransfer),
  };
}

/** `includes` (the published list and get): a comma-separated list of which only `organization` is known. */
export const Includes = z
  .string()
  .max(200)
  .optional()
  .transform((value, ctx) => {
    const names =
      value === undefined
        ? []
        : value
            .split(',')
            .map((n) => n.trim())
            .filter((n) => n !== '');
    const unknown = names.find((n) => n !== 'organization');
    if (unknown !== undefined)
      ctx.addIssue({ code: 'custom', message: `unknown value ${JSON.stringify(unknown)}; possible: organization` });
    return names.includes('organization');
  });

/** The recipients of `records`, when `includes=organization` asks for them. */
export async function recipientsOf(db: Parameters<typeof organizationsByIds>[0], records: DisbursementRecord[], wanted: boolean) {
  return wanted
    ? organizationsByIds(
        db,
        records.map((r) => r.row.recipient_organization_id),
      )
    : new Map<string, OrganizationRecord>();
}
