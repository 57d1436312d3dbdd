import { z } from 'zod';
import { DISBURSEMENT_STATUSES, DONATION_TYPES } from '../../db/schema-grantmaking.js';
import type { OrganizationRecord } from '../../directory/organization-service.js';
import type { DisbursementRecord } from '../../grantmaking/disbursements-service.js';
import type { ApiVersion } from '../routing/versions.js';
import { LifecycleFields, lifecycleOf } from './disbursement-lifecycle-view.js';
import { detailsV2026_04, Donor, text, toDisbursementV2026_01 } from './disbursement-shapes.js';

/** The published Disbursement of 2026-04-01, and which version's shape an answer takes (docs/grantmaking.md, "The answer"). */

export const Donors = z.object({ primary_donor: Donor.optional(), joint_donor: Donor.optional() }).strict();
export const DafGrant = z
  .object({ fund_name: text(255).optional() })
  .strict()
  .nullable();
export const CorporateMatch = z
  .object({ company_name: text(255) })
  .strict()
  .nullable();

const Transaction = z.object({
  id: z.string(),
  amount: z.number().int(),
  internal_transaction_id: z.string().nullable(),
  fee_amount: z.number().int().nullable(),
  net_amount: z.number().int(),
  type: z.enum(DONATION_TYPES),
  purpose: z.string().nullable(),
  note: z.string().nullable(),
  recipient_name: z.string().nullable(),
  donors: Donors.optional(),
  daf_grant: DafGrant.optional(),
  corporate_match: CorporateMatch.optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

export const Disbursement = z.object({
  id: z.string(),
  organization_id: z.string(),
  program_id: z.string(),
  amount: z.number().int().describe('Cents, positive'),
  auto_fund: z.boolean(),
  status: z.enum(DISBURSEMENT_STATUSES),
  ...LifecycleFields,
  bypass_chariot_organization_verification: z.boolean(),
  program_details: z.object({ id: z.string(), name: z.string().optional() }),
  transactions: z.array(Transaction),
  idempotency_key: z.string().optional(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

function toDisbursement(record: DisbursementRecord, organization?: OrganizationRecord) {
  const { row, transactions, programName } = record;
  return {
    id: row.id,
    organization_id: row.recipient_organization_id,
    program_id: row.program_id,
    amount: Number(row.amount),
    auto_fund: row.auto_fund,
    status: row.status,
    ...lifecycleOf(record, organization),
    bypass_chariot_organization_verification: row.bypass_organization_verification,
    program_details: { id: row.program_id, ...(programName !== undefined ? { name: programName } : {}) },
    transactions: transactions.map((t) => {
      const fee = t.fee_amount === null ? null : Number(t.fee_amount);
      return {
        id: t.id,
        amount: Number(t.amount),
        internal_transaction_id: t.internal_transaction_id,
        fee_amount: fee,
        net_amount: Number(t.amount) - (fee ?? 0),
        type: t.type,
        purpose: t.purpose,
        note: t.note,
        recipient_name: t.recipient_name,
        ...detailsV2026_04(t.details),
        created_at: t.created_at.toISOString(),
        updated_at: t.updated_at.toISOString(),
      };
    }),
    ...(row.idempotency_key !== null ? { idempotency_key: row.idempotency_key } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The Disbursement of `version`'s document. */
export function viewIn(version: ApiVersion): (record: DisbursementRecord, organization?: OrganizationRecord) => unknown {
  return version === '2026-01-15' ? toDisbursementV2026_01 : toDisbursement;
}
