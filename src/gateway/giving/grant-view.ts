import { z } from 'zod';
import type { ApiVersion } from '../routing/versions.js';
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

const grantFields = {
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
  paymentChannel: z.enum(['dafpay_network', 'direct']),
  address: GrantAddress.optional(),
};

const historyEntry = <T extends readonly [string, ...string[]]>(statuses: T) =>
  z.object({ id: z.string().uuid(), createdAt: z.string().datetime(), status: z.enum(statuses), comment: z.string().optional() });

export const Grant = z.object({ ...grantFields, statuses: z.array(historyEntry(GRANT_HISTORY_STATUSES)) });

/** 2026-01-15's GrantStatus knew three values: its history shows the entries it can name. */
const LEGACY_STATUSES = ['Initiated', 'Completed', 'Canceled'] as const;
const LegacyGrant = z.object({ ...grantFields, statuses: z.array(historyEntry(LEGACY_STATUSES)) });

/** The Grant of each version. */
export const GrantByVersion = { '2026-04-01': Grant, '2026-01-15': LegacyGrant };

const LEGACY_NAMES: Partial<Record<string, (typeof LEGACY_STATUSES)[number]>> = { initiated: 'Initiated', canceled: 'Canceled' };

function optional<T extends string>(key: T, value: string | null) {
  return value === null ? {} : ({ [key]: value } as Record<T, string>);
}

export function addressOf(address: GrantAddressJson | null) {
  return address === null ? {} : { address };
}

type GrantOut = Omit<z.output<typeof Grant>, 'statuses'> & {
  statuses: { id: string; createdAt: string; status: string; comment?: string }[];
};

function historyOf(statuses: readonly GrantStatusRow[], version: ApiVersion): GrantOut['statuses'] {
  const entries = statuses.map((s) => ({
    id: s.id,
    createdAt: s.created_at.toISOString(),
    status: s.status as string,
    ...optional('comment', s.comment),
  }));
  if (version !== '2026-01-15') return entries;
  return entries.flatMap((e) => {
    const legacy = LEGACY_NAMES[e.status];
    return legacy ? [{ ...e, status: legacy }] : [];
  });
}

function toGrant(row: GrantRow, statuses: readonly GrantStatusRow[], version: ApiVersion): GrantOut {
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
    statuses: historyOf(statuses, version),
    paymentChannel: row.payment_channel,
    ...addressOf(row.address),
  };
}

/** Grants as published, with their status histories (one query for all). */
export async function grantViews(db: Db, rows: readonly GrantRow[], version: ApiVersion): Promise<GrantOut[]> {
  const histories = await statusHistories(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => toGrant(row, histories.get(row.id) ?? [], version));
}

export async function grantView(db: Db, row: GrantRow, version: ApiVersion): Promise<GrantOut> {
  return (await grantViews(db, [row], version))[0]!;
}
