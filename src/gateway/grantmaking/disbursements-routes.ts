import { bulkApproveDisbursements, bulkCreateDisbursements, MAX_BULK } from '../../grantmaking/disbursements-bulk-service.js';
import { z } from 'zod';
import { DISBURSEMENT_STATUSES, DONATION_TYPES, REJECTION_REASONS } from '../../db/schema-grantmaking.js';
import {
  approveDisbursement,
  cancelDisbursement,
  completeDisbursement,
  createDisbursement,
  disbursementOf,
  disbursementsPage,
  failDisbursement,
  MAX_DISBURSEMENT_CENTS,
  MAX_TRANSACTIONS,
  type DisbursementRecord,
} from '../../grantmaking/disbursements-service.js';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf } from '../../idempotency/key.js';
import type { Caller } from '../routing/caller.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GRANTMAKERS, sandboxOnly, scopeOf } from './callers.js';

/** The published disbursements operations (docs/grantmaking.md, "Disbursements"). */

const text = (max: number) => z.string().max(max);
const Address = z
  .object({ line1: text(255), line2: text(255).optional(), city: text(255), state: text(255), postal_code: text(32), country: text(64) })
  .strict();
const Donor = z
  .object({
    full_name: text(255).optional(),
    first_name: text(255).optional(),
    last_name: text(255).optional(),
    email: text(320).optional(),
    phone: text(64).optional(),
    address: Address.optional(),
  })
  .strict();
const Donors = z.object({ primary_donor: Donor.optional(), joint_donor: Donor.optional() }).strict();
const DafGrant = z
  .object({ fund_name: text(255).optional() })
  .strict()
  .nullable();
const CorporateMatch = z
  .object({ company_name: text(255) })
  .strict()
  .nullable();
const Metadata = z.record(z.string().max(100), text(500)).refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');
const cents = z.number().int('must be a whole number of cents');

const TransactionInput = z
  .object({
    amount: cents.positive('must be positive').max(MAX_DISBURSEMENT_CENTS, `must be at most ${MAX_DISBURSEMENT_CENTS} cents`),
    internal_transaction_id: text(255).optional(),
    fee_amount: cents.nonnegative('must not be negative').nullable().optional(),
    type: z.enum(DONATION_TYPES),
    purpose: text(600).optional(),
    note: text(600).optional(),
    recipient_name: text(255).optional(),
    donors: Donors.optional(),
    daf_grant: DafGrant.optional(),
    corporate_match: CorporateMatch.optional(),
    metadata: Metadata.optional(),
  })
  .strict();

const CreateBody = z
  .object({
    organization_id: z.string().min(1).max(100),
    program_id: z.string().min(1).max(100).nullable().optional(),
    amount: cents.positive('must be positive').max(MAX_DISBURSEMENT_CENTS, `must be at most ${MAX_DISBURSEMENT_CENTS} cents`),
    auto_fund: z.boolean().optional(),
    bypass_chariot_organization_verification: z.boolean().optional(),
    transactions: z.array(TransactionInput).min(1, 'at least one is required').max(MAX_TRANSACTIONS),
  })
  .strict();

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

const Disbursement = z.object({
  id: z.string(),
  organization_id: z.string(),
  program_id: z.string(),
  amount: z.number().int().describe('Cents, positive'),
  auto_fund: z.boolean(),
  status: z.enum(DISBURSEMENT_STATUSES),
  approval: z.object({ approved_at: z.string().datetime() }).optional(),
  cancelation: z.object({ canceled_at: z.string().datetime() }).optional(),
  verification: z.object({ verified_at: z.string().datetime() }).optional(),
  rejection: z.object({ reason: z.enum(REJECTION_REASONS), rejected_at: z.string().datetime() }).optional(),
  bypass_chariot_organization_verification: z.boolean(),
  program_details: z.object({ id: z.string(), name: z.string().optional() }),
  transactions: z.array(Transaction),
  idempotency_key: z.string().optional(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

function toDisbursement({ row, transactions, programName }: DisbursementRecord) {
  return {
    id: row.id,
    organization_id: row.recipient_organization_id,
    program_id: row.program_id,
    amount: Number(row.amount),
    auto_fund: row.auto_fund,
    status: row.status,
    ...(row.approved_at ? { approval: { approved_at: row.approved_at.toISOString() } } : {}),
    ...(row.canceled_at ? { cancelation: { canceled_at: row.canceled_at.toISOString() } } : {}),
    ...(row.verified_at ? { verification: { verified_at: row.verified_at.toISOString() } } : {}),
    ...(row.rejection_reason !== null && row.rejected_at !== null
      ? { rejection: { reason: row.rejection_reason, rejected_at: row.rejected_at.toISOString() } }
      : {}),
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
        ...t.details,
        created_at: t.created_at.toISOString(),
        updated_at: t.updated_at.toISOString(),
      };
    }),
    ...(row.idempotency_key !== null ? { idempotency_key: row.idempotency_key } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The service's input from a validated create request. */
function createInput(input: z.output<typeof CreateBody>) {
  return {
    organizationId: input.organization_id,
    programId: input.program_id,
    amount: input.amount,
    autoFund: input.auto_fund ?? false,
    bypassVerification: input.bypass_chariot_organization_verification ?? false,
    transactions: input.transactions.map((t) => ({
      amount: t.amount,
      feeAmount: t.fee_amount,
      type: t.type,
      internalTransactionId: t.internal_transaction_id,
      purpose: t.purpose,
      note: t.note,
      recipientName: t.recipient_name,
      details: {
        ...(t.donors !== undefined ? { donors: t.donors } : {}),
        ...(t.daf_grant !== undefined ? { daf_grant: t.daf_grant } : {}),
        ...(t.corporate_match !== undefined ? { corporate_match: t.corporate_match } : {}),
        ...(t.metadata !== undefined ? { metadata: t.metadata } : {}),
      },
    })),
  };
}

/** Who acted, as a disbursement records it: the API key, or the user (or client) of an access token. */
export function actorOf(caller: Caller): string {
  if (caller.kind === 'api_key') return `api_key:${caller.keyId}`;
  return caller.subjectType === 'user' ? `user:${caller.userId}` : `client:${caller.clientId}`;
}

const Params = z.object({ id: z.string().min(1).max(100) });
const common = {
  tag: 'disbursements',
  versions: ['2026-04-01'],
  area: 'grantmaking',
  credentials: 'any',
  callers: GRANTMAKERS,
} as const;

export const disbursementRoutes = [
  defineRoute({
    ...common,
    operationId: 'createDisbursement',
    method: 'post',
    path: '/v1/disbursements',
    summary: 'Create a disbursement to a directory organization, pending approval',
    access: 'write',
    body: CreateBody,
    status: 201,
    idempotent: true,
    location: (result) => `/v1/disbursements/${(result as { id: string }).id}`,
    response: Disbursement,
    errors: [400, 401, 403],
    async handler({ db, caller, ctx, body }) {
      const input = body as z.output<typeof CreateBody>;
      const record = await createDisbursement(db, scopeOf(caller), actorOf(caller), {
        ...createInput(input),
        idempotencyKey: idempotencyKeyOf(ctx.headers[IDEMPOTENCY_HEADER.toLowerCase()]),
      });
      return toDisbursement(record);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'bulkCreateDisbursements',
    method: 'post',
    path: '/v1/disbursements/bulk',
    summary: 'Create disbursements all together, or none when any is refused',
    access: 'write',
    body: z.object({ disbursements: z.array(CreateBody).min(1, 'at least one is required').max(MAX_BULK) }).strict(),
    status: 201,
    idempotent: true,
    response: z.object({ disbursements: z.array(Disbursement), count: z.number().int() }),
    errors: [400, 401, 403],
    async handler({ db, caller, body }) {
      const { disbursements } = body as { disbursements: z.output<typeof CreateBody>[] };
      const inputs = disbursements.map((d) => createInput(d));
      const records = await bulkCreateDisbursements(db, scopeOf(caller), actorOf(caller), inputs);
      return { disbursements: records.map(toDisbursement), count: records.length };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'bulkApproveDisbursements',
    method: 'post',
    path: '/v1/disbursements/approve',
    summary: 'Approve pending_approval disbursements all together, or none when any cannot be',
    access: 'write',
    body: z.object({ disbursement_ids: z.array(z.string().min(1).max(100)).min(1, 'at least one is required').max(MAX_BULK) }).strict(),
    response: z.object({ disbursements: z.array(Disbursement), count: z.number().int() }),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, body }) {
      const { disbursement_ids } = body as { disbursement_ids: string[] };
      const records = await bulkApproveDisbursements(db, scopeOf(caller), actorOf(caller), disbursement_ids);
      return { disbursements: records.map(toDisbursement), count: records.length };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'listDisbursements',
    method: 'get',
    path: '/v1/disbursements',
    summary: "List the grantmaker's disbursements, newest first",
    access: 'read',
    query: z
      .object({
        organization_id: z.string().min(1).max(100).optional(),
        page_limit: z.coerce.number().int().min(1).max(100).default(100),
        next_page_token: z.string().max(200).optional(),
        idempotency_key: z.string().min(1).max(255).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(Disbursement), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const filter = {
        ...(query.organization_id !== undefined ? { recipientOrganizationId: query.organization_id } : {}),
        ...(query.idempotency_key !== undefined ? { idempotencyKey: query.idempotency_key } : {}),
      };
      const records = await disbursementsPage(
        db,
        scopeOf(caller),
        filter,
        decodeCursor(query.next_page_token, 'next_page_token'),
        query.page_limit,
      );
      return listPage(
        records.map((r) => ({ ...r, id: r.row.id, created_at: r.row.created_at })),
        query.page_limit,
        toDisbursement,
        'next_page_token',
      );
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getDisbursement',
    method: 'get',
    path: '/v1/disbursements/:id',
    summary: "Get one of the grantmaker's disbursements",
    access: 'read',
    params: Params,
    response: Disbursement,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const record = await disbursementOf(db, scopeOf(caller), params.id);
      if (!record) throw resourceNotFound('The disbursement');
      return toDisbursement(record);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'approveDisbursement',
    method: 'post',
    path: '/v1/disbursements/:id/approve',
    summary: 'Approve a pending_approval disbursement: awaiting_verification, submitted (its amount held) or awaiting_balance',
    access: 'write',
    params: Params,
    response: Disbursement,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      return toDisbursement(await approveDisbursement(db, scopeOf(caller), actorOf(caller), params.id));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'cancelDisbursement',
    method: 'post',
    path: '/v1/disbursements/:id/cancel',
    summary: 'Cancel a disbursement not yet submitted (pending_approval or awaiting_balance)',
    access: 'write',
    params: Params,
    response: Disbursement,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      return toDisbursement(await cancelDisbursement(db, scopeOf(caller), params.id));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'simulateDisbursementCompletion',
    method: 'post',
    path: '/v1/simulations/disbursements/:id/complete',
    summary: 'Sandbox: a submitted disbursement was paid (its hold settles out of the account)',
    access: 'write',
    params: Params,
    status: 202,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, ctx, params }) {
      sandboxOnly({ caller, ctx });
      await completeDisbursement(db, { scope: scopeOf(caller) }, params.id);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'simulateDisbursementFailure',
    method: 'post',
    path: '/v1/simulations/disbursements/:id/fail',
    summary: 'Sandbox: the payment of a submitted disbursement failed (its hold is released)',
    access: 'write',
    params: Params,
    status: 202,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, ctx, params }) {
      sandboxOnly({ caller, ctx });
      await failDisbursement(db, { scope: scopeOf(caller) }, params.id);
    },
  }),
];
