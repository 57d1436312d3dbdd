import { bulkApproveDisbursements, bulkCreateDisbursements, MAX_BULK } from '../../grantmaking/disbursements-bulk-service.js';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import { DONATION_TYPES, STOP_REASONS } from '../../db/schema-grantmaking.js';
import { stopDisbursement } from '../../grantmaking/disbursement-retries-service.js';
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
} from '../../grantmaking/disbursements-service.js';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf } from '../../idempotency/key.js';
import type { Caller } from '../routing/caller.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { Includes, recipientsOf } from './disbursement-lifecycle-view.js';
import { CorporateMatch, DafGrant, Disbursement, Donors, viewIn } from './disbursement-view.js';
import { defineRoute } from '../routing/route-spec.js';
import { GRANTMAKERS, sandboxOnly, scopeOf } from './callers.js';
import type { ApiVersion } from '../routing/versions.js';
import {
  cents,
  DisbursementV2026_01,
  existsInV2026_01,
  Metadata,
  text,
  transactionFromV2026_01,
  transactionInputV2026_01,
} from './disbursement-shapes.js';

/** The published disbursements operations (docs/grantmaking.md, "Disbursements"). */

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

/** 2026-01-15's create: the same but for its transactions (disbursement-shapes.ts). */
const CreateBodyV2026_01 = CreateBody.extend({
  transactions: z.array(transactionInputV2026_01(MAX_DISBURSEMENT_CENTS)).min(1, 'at least one is required').max(MAX_TRANSACTIONS),
}).strict();
type CreateRequest = z.output<typeof CreateBody> | z.output<typeof CreateBodyV2026_01>;

/** The service's input from a validated create request of `version`. */
function createInput(version: ApiVersion, input: CreateRequest, maxAmount: number | undefined) {
  return {
    organizationId: input.organization_id,
    programId: input.program_id,
    amount: input.amount,
    maxAmount,
    autoFund: input.auto_fund ?? false,
    bypassVerification: input.bypass_chariot_organization_verification ?? false,
    transactions:
      version === '2026-01-15'
        ? (input as z.output<typeof CreateBodyV2026_01>).transactions.map(transactionFromV2026_01)
        : (input as z.output<typeof CreateBody>).transactions.map((t) => ({
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

/**
 * Under 2026-01-15 a disbursement it has no shape for (a corporate match's) does not exist:
 * reading or acting on it is 404, as for another grantmaker's (disbursement-shapes.ts).
 */
async function mustExistIn(version: ApiVersion, db: Db, caller: Caller, id: string): Promise<void> {
  if (version !== '2026-01-15') return;
  const record = await disbursementOf(db, scopeOf(caller), id);
  if (record && !existsInV2026_01(record)) throw resourceNotFound('The disbursement');
}

/** Who acted, as a disbursement records it: the API key, or the user (or client) of an access token. */
export function actorOf(caller: Caller): string {
  if (caller.kind === 'api_key') return `api_key:${caller.keyId}`;
  return caller.subjectType === 'user' ? `user:${caller.userId}` : `client:${caller.clientId}`;
}

const Params = z.object({ id: z.string().min(1).max(100) });
const ListQuery = z
  .object({
    organization_id: z.string().min(1).max(100).optional(),
    page_limit: z.coerce.number().int().min(1).max(100).default(100),
    next_page_token: z.string().max(200).optional(),
    idempotency_key: z.string().min(1).max(255).optional(),
    includes: Includes,
  })
  .strict();
const common = {
  tag: 'disbursements',
  versions: ['2026-04-01', '2026-01-15'],
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
    bodyByVersion: { '2026-01-15': CreateBodyV2026_01 },
    status: 201,
    idempotent: true,
    location: (result) => `/v1/disbursements/${(result as { id: string }).id}`,
    response: { '2026-04-01': Disbursement, '2026-01-15': DisbursementV2026_01 },
    errors: [400, 401, 403],
    async handler({ db, caller, ctx, body, services, version }) {
      const record = await createDisbursement(db, scopeOf(caller), actorOf(caller), {
        ...createInput(version, body as CreateRequest, services.maxDisbursementCents),
        idempotencyKey: idempotencyKeyOf(ctx.headers[IDEMPOTENCY_HEADER.toLowerCase()]),
      });
      return viewIn(version)(record);
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
    bodyByVersion: {
      '2026-01-15': z.object({ disbursements: z.array(CreateBodyV2026_01).min(1, 'at least one is required').max(MAX_BULK) }).strict(),
    },
    status: 201,
    idempotent: true,
    response: {
      '2026-04-01': z.object({ disbursements: z.array(Disbursement), count: z.number().int() }),
      '2026-01-15': z.object({ disbursements: z.array(DisbursementV2026_01), count: z.number().int() }),
    },
    errors: [400, 401, 403],
    async handler({ db, caller, body, services, version }) {
      const { disbursements } = body as { disbursements: CreateRequest[] };
      const inputs = disbursements.map((d) => createInput(version, d, services.maxDisbursementCents));
      const records = await bulkCreateDisbursements(db, scopeOf(caller), actorOf(caller), inputs);
      return { disbursements: records.map((r) => viewIn(version)(r)), count: records.length };
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
    response: {
      '2026-04-01': z.object({ disbursements: z.array(Disbursement), count: z.number().int() }),
      '2026-01-15': z.object({ disbursements: z.array(DisbursementV2026_01), count: z.number().int() }),
    },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, body, version }) {
      const { disbursement_ids } = body as { disbursement_ids: string[] };
      for (const id of disbursement_ids) await mustExistIn(version, db, caller, id);
      const records = await bulkApproveDisbursements(db, scopeOf(caller), actorOf(caller), disbursement_ids);
      return { disbursements: records.map((r) => viewIn(version)(r)), count: records.length };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'listDisbursements',
    method: 'get',
    path: '/v1/disbursements',
    summary: "List the grantmaker's disbursements, newest first",
    access: 'read',
    query: ListQuery,
    // idempotency_key is a 2026-04-01 filter; 2026-01-15 refuses it as unknown.
    queryByVersion: { '2026-01-15': ListQuery.omit({ idempotency_key: true }).strict() },
    response: {
      '2026-04-01': z.object({ results: z.array(Disbursement), next_page_token: z.string().optional() }),
      '2026-01-15': z.object({ results: z.array(DisbursementV2026_01), next_page_token: z.string().optional() }),
    },
    errors: [400, 401, 403],
    async handler({ db, caller, query, version }) {
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
      const recipients = await recipientsOf(db, records, query.includes);
      const page = listPage(
        records.map((r) => ({ ...r, id: r.row.id, created_at: r.row.created_at })),
        query.page_limit,
        (r) => r,
        'next_page_token',
      );
      // The page's token is the page's, whatever 2026-01-15 leaves out of it (mustExistIn).
      const shown = version === '2026-01-15' ? page.results.filter(existsInV2026_01) : page.results;
      return { ...page, results: shown.map((r) => viewIn(version)(r, recipients.get(r.row.recipient_organization_id))) };
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
    query: z.object({ includes: Includes }).strict(),
    response: { '2026-04-01': Disbursement, '2026-01-15': DisbursementV2026_01 },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query, version }) {
      const record = await disbursementOf(db, scopeOf(caller), params.id);
      if (!record || (version === '2026-01-15' && !existsInV2026_01(record))) throw resourceNotFound('The disbursement');
      const recipients = await recipientsOf(db, [record], query.includes);
      return viewIn(version)(record, recipients.get(record.row.recipient_organization_id));
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
    response: { '2026-04-01': Disbursement, '2026-01-15': DisbursementV2026_01 },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, version }) {
      await mustExistIn(version, db, caller, params.id);
      return viewIn(version)(await approveDisbursement(db, scopeOf(caller), actorOf(caller), params.id));
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
    response: { '2026-04-01': Disbursement, '2026-01-15': DisbursementV2026_01 },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, version }) {
      await mustExistIn(version, db, caller, params.id);
      return viewIn(version)(await cancelDisbursement(db, scopeOf(caller), params.id, actorOf(caller)));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'stopDisbursement',
    method: 'post',
    path: '/v1/disbursements/:id/stop',
    summary: 'Stop the payment of a submitted disbursement paid by a check not yet deposited (its hold is released)',
    access: 'write',
    params: Params,
    body: z.object({ reason: z.enum(STOP_REASONS) }).strict(),
    status: 202,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, params, body, version }) {
      await mustExistIn(version, db, caller, params.id);
      const { reason } = body as { reason: (typeof STOP_REASONS)[number] };
      await stopDisbursement(db, scopeOf(caller), actorOf(caller), params.id, reason);
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
    async handler({ db, caller, ctx, params, version }) {
      sandboxOnly({ caller, ctx });
      await mustExistIn(version, db, caller, params.id);
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
    async handler({ db, caller, ctx, params, version }) {
      sandboxOnly({ caller, ctx });
      await mustExistIn(version, db, caller, params.id);
      await failDisbursement(db, { scope: scopeOf(caller) }, params.id);
    },
  }),
];
