import { z } from 'zod';
import type { Db } from '../../db/database.js';
import { GRANT_HISTORY_STATUSES, type GrantAddressJson } from '../../db/schema-giving.js';
import { statusHistories, type GivingGrantRow, type GrantStatusRow } from '../../giving/grants-service.js';

/** The published Grant, as every grant operation answers it (docs/giving.md, "A grant's life"). */

type GrantRow = GivingGrantRow;

export const GrantAddress = z.object({
  line1: z.string().optional(),
  line2: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postalCode: z.string().optional(),
});

export const Grant = z.object({
  id: z.string().uuid(),
  trackingId: z.string(),
  workflowSessionId: z.string().uuid(),
  fundId: z.string(),
  donor_account_id: z.string().optional(),
  externalGrantId: z.string().optional(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  amount: z.number().int().describe('Whole cents'),
  status: z.string(),
  feeDetail: z.object({
    total: z.number().int(),
    contributions: z.array(
      z.object({ name: z.string(), amount: z.number().int(), feeType: z.enum(['chariot', 'daf', 'fundraising_application']) }),
    ),
  }),
  metadata: z.record(z.string(), z.string()),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  note: z.string().optional(),
  statuses: z.array(
    z.object({
      id: z.string().uuid(),
      createdAt: z.string().datetime(),
      status: z.enum(GRANT_HISTORY_STATUSES),
      comment: z.string().optional(),
    }),
  ),
  paymentChannel: z.enum(['dafpay_network', 'direct']),
  address: GrantAddress.optional(),
});

function optional<T extends string>(key: T, value: string | null) {
  return value === null ? {} : ({ [key]: value } as Record<T, string>);
}

export function addressOf(address: GrantAddressJson | null) {
  return address === null ? {} : { address };
}

function toGrant(row: GrantRow, statuses: readonly GrantStatusRow[]): z.output<typeof Grant> {
  const fee = Number(row.application_fee);
  return {
    id: row.id,
    trackingId: row.tracking_id,
    workflowSessionId: row.workflow_session_id,
    fundId: row.fund_id,
    ...optional('donor_account_id', row.donor_account_id),
    ...optional('externalGrantId', row.external_grant_id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    amount: Number(row.amount),
    status: row.status,
    // Almoner charges no fee of its own: the platform's is the only contribution.
    feeDetail: {
      total: fee,
      contributions: fee > 0 ? [{ name: 'Application fee', amount: fee, feeType: 'fundraising_application' as const }] : [],
    },
    metadata: row.metadata,
    ...optional('firstName', row.first_name),
    ...optional('lastName', row.last_name),
    ...optional('email', row.email),
    ...optional('phone', row.phone),
    ...optional('note', row.note),
    statuses: statuses.map((s) => ({
      id: s.id,
      createdAt: s.created_at.toISOString(),
      status: s.status,
      ...optional('comment', s.comment),
    })),
    paymentChannel: row.payment_channel,
    ...addressOf(row.address),
  };
}

/** Grants as published, with their status histories (one query for all). */
export async function grantViews(db: Db, rows: readonly GrantRow[]): Promise<z.output<typeof Grant>[]> {
  const histories = await statusHistories(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => toGrant(row, histories.get(row.id) ?? []));
}

export async function grantView(db: Db, row: GrantRow): Promise<z.output<typeof Grant>> {
  return (await grantViews(db, [row]))[0]!;
}
