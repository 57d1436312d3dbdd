import { z } from 'zod';
import { depositOf, depositsPage } from '../../gift-processing/deposits-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIFT_READ } from './gift-callers.js';
import { Deposit, toDeposit } from './gift-shapes.js';

const dateTime = z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' });
const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(100),
    page_token: z.string().max(200).optional(),
    payment_source_id: z.string().max(2000).optional(),
    'settled_at.after': dateTime.optional(),
    'settled_at.before': dateTime.optional(),
  })
  .strict();

const common = { ...GIFT_READ, tag: 'deposits', versions: ['2026-04-01', '2026-01-15'] } as const;

export const depositRoutes = [
  defineRoute({
    ...common,
    operationId: 'listDeposits',
    method: 'get',
    path: '/v1/deposits',
    summary: "List the nonprofit's deposits, newest first",
    query: ListQuery,
    response: z.object({ results: z.array(Deposit), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await depositsPage(
        db,
        caller,
        {
          paymentSourceIds: query.payment_source_id
            ?.split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          settledAfter: query['settled_at.after'] ? new Date(query['settled_at.after']) : undefined,
          settledBefore: query['settled_at.before'] ? new Date(query['settled_at.before']) : undefined,
        },
        decodeCursor(query.page_token, 'page_token'),
        query.limit,
      );
      return listPage(rows, query.limit, toDeposit, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getDeposit',
    method: 'get',
    path: '/v1/deposits/:id',
    summary: "Get one of the nonprofit's deposits with its transfer and property values",
    params: z.object({ id: z.string().min(1).max(100) }),
    response: Deposit,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await depositOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The deposit');
      return toDeposit(row);
    },
  }),
];
