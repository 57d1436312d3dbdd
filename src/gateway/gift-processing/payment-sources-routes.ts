import { z } from 'zod';
import { paymentSourceOf, paymentSourcesPage } from '../../gift-processing/payment-sources-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIFT_READ } from './gift-callers.js';
import { PaymentSource, PaymentSourceV2026_01, toPaymentSource } from './gift-shapes.js';

export const PageQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(100),
    page_token: z.string().max(200).optional(),
  })
  .strict();

const common = { ...GIFT_READ, tag: 'paymentSources', versions: ['2026-04-01', '2026-01-15'] } as const;

export const paymentSourceRoutes = [
  defineRoute({
    ...common,
    operationId: 'listPaymentSources',
    method: 'get',
    path: '/v1/payment_sources',
    summary: "List the nonprofit's payment sources, newest first",
    query: PageQuery,
    response: {
      '2026-04-01': z.object({ results: z.array(PaymentSource), next_page_token: z.string().optional() }),
      '2026-01-15': z.object({ results: z.array(PaymentSourceV2026_01), next_page_token: z.string().optional() }),
    },
    errors: [400, 401, 403],
    async handler({ db, caller, version, query }) {
      const rows = await paymentSourcesPage(db, caller, decodeCursor(query.page_token, 'page_token'), query.limit);
      return listPage(rows, query.limit, (row) => toPaymentSource(row, version), 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getPaymentSource',
    method: 'get',
    path: '/v1/payment_sources/:id',
    summary: "Get one of the nonprofit's payment sources",
    params: z.object({ id: z.string().min(1).max(100) }),
    response: { '2026-04-01': PaymentSource, '2026-01-15': PaymentSourceV2026_01 },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, version, params }) {
      const row = await paymentSourceOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The payment source');
      return toPaymentSource(row, version);
    },
  }),
];
