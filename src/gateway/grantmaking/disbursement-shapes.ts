import { z } from 'zod';
import { DISBURSEMENT_STATUSES } from '../../db/schema-grantmaking.js';
import type { OrganizationRecord } from '../../directory/organization-service.js';
import type { DisbursementRecord, TransactionInput } from '../../grantmaking/disbursements-service.js';
import { LifecycleFields, lifecycleOf } from './disbursement-lifecycle-view.js';

/**
 * The disbursements' published pieces both versions share (a donor, its address, metadata), and
 * what 2026-01-15 has of its own (docs/grantmaking.md, "Under 2026-01-15"): a transaction with a
 * `description` and a `donor_advised_fund_grant` object, in place of 2026-04-01's flat
 * `internal_transaction_id`, `purpose`, `note`, `recipient_name`, `donors`, `daf_grant` and
 * `corporate_match`; the one donation type `donor_advised_fund_grant`; no `idempotency_key`.
 */

export const text = (max: number) => z.string().max(max);
export const cents = z.number().int('must be a whole number of cents');
export const Address = z
  .object({ line1: text(255), line2: text(255).optional(), city: text(255), state: text(255), postal_code: text(32), country: text(64) })
  .strict();
export const Donor = z
  .object({
    full_name: text(255).optional(),
    first_name: text(255).optional(),
    last_name: text(255).optional(),
    email: text(320).optional(),
    phone: text(64).optional(),
    address: Address.optional(),
  })
  .strict();
export const Metadata = z.record(z.string().max(100), text(500)).refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');

type DonorValue = z.output<typeof Donor>;

/**
 * 2026-01-15's DonorAdvisedFundGrant. Its fields are kept where 2026-04-01 has them (grant_id as
 * internal_transaction_id, fund_name as daf_grant.fund_name, purpose, note, the first two donors
 * as primary and joint donor), so each version reads what the other wrote; organization_name,
 * which 2026-04-01 has no field for, is kept beside them.
 */
const DafGrantV2026_01 = z
  .object({
    grant_id: text(255).optional(),
    organization_name: text(255).optional(),
    fund_name: text(255).optional(),
    purpose: text(400).optional(),
    note: text(400).optional(),
    donors: z.array(Donor).max(2, 'at most 2: a primary and a joint donor').optional(),
  })
  .strict();

const DONATION_TYPES_V2026_01 = ['donor_advised_fund_grant'] as const;

export function transactionInputV2026_01(amountMax: number) {
  return z
    .object({
      amount: cents.positive('must be positive').max(amountMax, `must be at most ${amountMax} cents`),
      fee_amount: cents.nonnegative('must not be negative').nullable().optional(),
      description: text(600).optional(),
      type: z.enum(DONATION_TYPES_V2026_01),
      donor_advised_fund_grant: DafGrantV2026_01.optional(),
      metadata: Metadata.optional(),
    })
    .strict();
}

type TransactionV2026_01 = z.output<ReturnType<typeof transactionInputV2026_01>>;

/** The service's transaction from a 2026-01-15 one. */
export function transactionFromV2026_01(t: TransactionV2026_01): TransactionInput {
  const grant = t.donor_advised_fund_grant;
  const [primary, joint] = grant?.donors ?? [];
  return {
    amount: t.amount,
    feeAmount: t.fee_amount,
    type: t.type,
    internalTransactionId: grant?.grant_id,
    purpose: grant?.purpose,
    note: grant?.note,
    details: {
      ...(primary || joint ? { donors: { ...(primary ? { primary_donor: primary } : {}), ...(joint ? { joint_donor: joint } : {}) } } : {}),
      ...(grant?.fund_name !== undefined ? { daf_grant: { fund_name: grant.fund_name } } : {}),
      ...(grant?.organization_name !== undefined ? { daf_organization_name: grant.organization_name } : {}),
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(t.metadata !== undefined ? { metadata: t.metadata } : {}),
    },
  };
}

/** As read: 2026-04-01's purpose and note may be longer than 2026-01-15 lets a create send. */
const DafGrantOutV2026_01 = z.object({
  grant_id: z.string().optional(),
  organization_name: z.string().optional(),
  fund_name: z.string().optional(),
  purpose: z.string().optional(),
  note: z.string().optional(),
  donors: z.array(Donor).optional(),
});

const TransactionV2026_01 = z.object({
  id: z.string(),
  amount: z.number().int(),
  fee_amount: z.number().int().nullable(),
  net_amount: z.number().int(),
  description: z.string().optional(),
  type: z.enum(DONATION_TYPES_V2026_01),
  donor_advised_fund_grant: DafGrantOutV2026_01.optional(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
  metadata: z.record(z.string(), z.string()).optional(),
});

export const DisbursementV2026_01 = z.object({
  id: z.string(),
  organization_id: z.string(),
  program_id: z.string(),
  amount: z.number().int().describe('Cents, positive'),
  auto_fund: z.boolean(),
  status: z.enum(DISBURSEMENT_STATUSES),
  ...LifecycleFields,
  program_details: z.object({ id: z.string(), name: z.string().optional() }),
  transactions: z.array(TransactionV2026_01),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

/** What a transaction's details may hold (the service stores them as JSON). */
interface StoredDetails {
  donors?: { primary_donor?: DonorValue; joint_donor?: DonorValue };
  daf_grant?: { fund_name?: string } | null;
  corporate_match?: unknown;
  metadata?: Record<string, string>;
  daf_organization_name?: string;
  description?: string;
}

/** The details 2026-04-01 shows: those of its Transaction, never what only 2026-01-15 has. */
export function detailsV2026_04(details: unknown) {
  const d = (details ?? {}) as StoredDetails;
  return {
    ...(d.donors !== undefined ? { donors: d.donors } : {}),
    ...(d.daf_grant !== undefined ? { daf_grant: d.daf_grant } : {}),
    ...(d.corporate_match !== undefined ? { corporate_match: d.corporate_match } : {}),
    ...(d.metadata !== undefined ? { metadata: d.metadata } : {}),
  };
}

/**
 * A disbursement 2026-01-15 can show: its one donation type is donor_advised_fund_grant, so one
 * with a corporate match (2026-04-01's) does not exist there, as a later event category does not.
 */
export function existsInV2026_01({ transactions }: DisbursementRecord): boolean {
  return transactions.every((t) => t.type === 'donor_advised_fund_grant');
}

/** The 2026-01-15 Disbursement of a record that exists there (existsInV2026_01). */
export function toDisbursementV2026_01(record: DisbursementRecord, organization?: OrganizationRecord) {
  const { row, transactions, programName } = record;
  // The routes answer 404 for it first.
  if (!existsInV2026_01(record)) throw new Error(`disbursement ${row.id} has no 2026-01-15 shape`);
  return {
    id: row.id,
    organization_id: row.recipient_organization_id,
    program_id: row.program_id,
    amount: Number(row.amount),
    auto_fund: row.auto_fund,
    status: row.status,
    ...lifecycleOf(record, organization),
    program_details: { id: row.program_id, ...(programName !== undefined ? { name: programName } : {}) },
    transactions: transactions.map((t) => {
      const fee = t.fee_amount === null ? null : Number(t.fee_amount);
      const d = (t.details ?? {}) as StoredDetails;
      const donors = [d.donors?.primary_donor, d.donors?.joint_donor].filter((x): x is DonorValue => x !== undefined);
      const grant = {
        ...(t.internal_transaction_id !== null ? { grant_id: t.internal_transaction_id } : {}),
        ...(d.daf_organization_name !== undefined ? { organization_name: d.daf_organization_name } : {}),
        ...(d.daf_grant?.fund_name !== undefined ? { fund_name: d.daf_grant.fund_name } : {}),
        ...(t.purpose !== null ? { purpose: t.purpose } : {}),
        ...(t.note !== null ? { note: t.note } : {}),
        ...(donors.length > 0 ? { donors } : {}),
      };
      return {
        id: t.id,
        amount: Number(t.amount),
        fee_amount: fee,
        net_amount: Number(t.amount) - (fee ?? 0),
        ...(d.description !== undefined ? { description: d.description } : {}),
        type: 'donor_advised_fund_grant' as const,
        ...(Object.keys(grant).length > 0 ? { donor_advised_fund_grant: grant } : {}),
        created_at: t.created_at.toISOString(),
        updated_at: t.updated_at.toISOString(),
        ...(d.metadata !== undefined ? { metadata: d.metadata } : {}),
      };
    }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
