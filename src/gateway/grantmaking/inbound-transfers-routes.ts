import { z } from 'zod';
import { INBOUND_TRANSFER_STATUSES } from '../../db/schema-grantmaking.js';
import {
  cancelInboundTransfer,
  completeInboundTransfer,
  createInboundTransfer,
  failInboundTransfer,
  inboundTransferOf,
  inboundTransfersPage,
  MAX_INBOUND_TRANSFER_CENTS,
  type InboundTransferRow,
} from '../../grantmaking/inbound-transfers-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GRANTMAKERS, sandboxOnly, scopeOf } from './callers.js';

/** The published InboundTransfer: the financial account it funds is not among its members. */
const InboundTransfer = z.object({
  id: z.string(),
  amount: z.number().int().describe('Cents, positive'),
  description: z.string().optional(),
  status: z.enum(INBOUND_TRANSFER_STATUSES),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

function toInboundTransfer(row: InboundTransferRow) {
  return {
    id: row.id,
    amount: Number(row.amount),
    description: row.description ?? undefined,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const CreateBody = z
  .object({
    amount: z
      .number()
      .int('must be a whole number of cents')
      .positive('must be positive')
      .max(MAX_INBOUND_TRANSFER_CENTS, `must be at most ${MAX_INBOUND_TRANSFER_CENTS} cents`),
    account_id: z.string().min(1).max(100),
    description: z.string().max(1000).optional(),
  })
  .strict();

const Params = z.object({ id: z.string().min(1).max(100) });
const common = {
  tag: 'inboundTransfers',
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grantmaking',
  credentials: 'any',
  callers: GRANTMAKERS,
} as const;

export const inboundTransferRoutes = [
  defineRoute({
    ...common,
    operationId: 'createInboundTransfer',
    method: 'post',
    path: '/v1/inbound_transfers',
    summary: "Fund one of the grantmaker's financial accounts from its bank account",
    access: 'write',
    body: CreateBody,
    status: 201,
    idempotent: true,
    location: (result) => `/v1/inbound_transfers/${(result as { id: string }).id}`,
    response: InboundTransfer,
    errors: [400, 401, 403],
    async handler({ db, caller, body }) {
      const input = body as z.output<typeof CreateBody>;
      const row = await createInboundTransfer(db, scopeOf(caller), {
        amount: input.amount,
        accountId: input.account_id,
        description: input.description,
      });
      return toInboundTransfer(row);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'listInboundTransfers',
    method: 'get',
    path: '/v1/inbound_transfers',
    summary: "List the grantmaker's inbound transfers, newest first",
    access: 'read',
    query: z
      .object({
        limit: z.coerce.number().int().min(1).max(100).default(100),
        pageToken: z.string().max(200).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(InboundTransfer), nextPageToken: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await inboundTransfersPage(db, scopeOf(caller), decodeCursor(query.pageToken, 'pageToken'), query.limit);
      return listPage(rows, query.limit, toInboundTransfer, 'nextPageToken');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getInboundTransfer',
    method: 'get',
    path: '/v1/inbound_transfers/:id',
    summary: "Get one of the grantmaker's inbound transfers",
    access: 'read',
    params: Params,
    response: InboundTransfer,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await inboundTransferOf(db, scopeOf(caller), params.id);
      if (!row) throw resourceNotFound('The inbound transfer');
      return toInboundTransfer(row);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'cancelInboundTransfer',
    method: 'post',
    path: '/v1/inbound_transfers/:id/cancel',
    summary: 'Cancel a pending inbound transfer (412 once it is not pending)',
    access: 'write',
    params: Params,
    response: InboundTransfer,
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, params }) {
      return toInboundTransfer(await cancelInboundTransfer(db, scopeOf(caller), params.id));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'simulateInboundTransferFailure',
    method: 'post',
    path: '/v1/simulations/inbound_transfers/:id/fail',
    summary: 'Sandbox: the money of a pending inbound transfer did not arrive (no money moves)',
    access: 'write',
    params: Params,
    status: 202,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, ctx, params }) {
      sandboxOnly({ caller, ctx });
      await failInboundTransfer(db, { scope: scopeOf(caller) }, params.id);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'simulateInboundTransferCompletion',
    method: 'post',
    path: '/v1/simulations/inbound_transfers/:id/complete',
    summary: "Sandbox: the money of a pending inbound transfer arrived (posted to the account's available balance once)",
    access: 'write',
    params: Params,
    status: 202,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 412],
    async handler({ db, caller, ctx, params }) {
      sandboxOnly({ caller, ctx });
      await completeInboundTransfer(db, { scope: scopeOf(caller) }, params.id);
    },
  }),
];
