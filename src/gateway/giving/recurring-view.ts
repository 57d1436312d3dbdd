import { z } from 'zod';
import type { RecurringGrantListRow, UnintegratedGrantRow } from '../../giving/grants-service.js';
import { addressOf, GrantAddress } from './grant-view.js';

/** The published RecurringGrant and UnintegratedGrant (docs/giving.md, "Recurring and unintegrated grants"). */

const donorFields = {
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  phone: z.string().optional(),
  email: z.string().optional(),
  note: z.string().optional(),
  address: GrantAddress.optional(),
};

export const RecurringGrant = z.object({
  id: z.string().uuid(),
  trackingId: z.string(),
  workflowSessionId: z.string().uuid(),
  fundId: z.string(),
  frequency: z.enum(['MONTHLY']),
  externalRecurringGrantId: z.string().optional(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  amount: z.number().int(),
  ...donorFields,
});

export const UnintegratedGrant = z.object({
  id: z.string().uuid(),
  trackingId: z.string(),
  workflowSessionId: z.string().uuid(),
  fundId: z.string(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  amount: z.number().int(),
  status: z.enum(['Unknown', 'Completed', 'Canceled']),
  metadata: z.record(z.string(), z.string()),
  paymentChannel: z.enum(['offline']),
  ...donorFields,
});

function present<T extends Record<string, string | null>>(fields: T): Partial<Record<keyof T, string>> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null)) as Partial<Record<keyof T, string>>;
}

function donorOf(row: RecurringGrantListRow | UnintegratedGrantRow) {
  return {
    ...present({ firstName: row.first_name, lastName: row.last_name, phone: row.phone, email: row.email, note: row.note }),
    ...addressOf(row.address),
  };
}

export function toRecurringGrant(row: RecurringGrantListRow): z.output<typeof RecurringGrant> {
  return {
    id: row.id,
    trackingId: row.tracking_id,
    workflowSessionId: row.workflow_session_id,
    fundId: row.fund_id,
    frequency: row.frequency,
    ...present({ externalRecurringGrantId: row.external_recurring_grant_id }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    amount: Number(row.amount),
    ...donorOf(row),
  };
}

export function toUnintegratedGrant(row: UnintegratedGrantRow): z.output<typeof UnintegratedGrant> {
  return {
    id: row.id,
    trackingId: row.tracking_id,
    workflowSessionId: row.workflow_session_id,
    fundId: row.fund_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    amount: Number(row.amount),
    status: row.status,
    metadata: row.metadata,
    // Given outside Almoner: how it is sent cannot be known.
    paymentChannel: 'offline',
    ...donorOf(row),
  };
}
