import { z } from 'zod';
import { fulfillLockboxRequest, lockboxesPage, lockboxOf } from '../../gift-processing/lockboxes-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIFT_READ, LOCKBOX_PROVIDERS } from './gift-callers.js';
import { Lockbox, toLockbox } from './gift-shapes.js';
import { PageQuery } from './payment-sources-routes.js';

/** The published Address a provider sends (lengths as the document gives them). */
const AddressBody = z
  .object({
    line1: z.string().trim().min(1).max(255),
    line2: z.string().trim().max(255).optional(),
    city: z.string().trim().min(1).max(255),
    state: z.string().trim().min(1).max(255),
    postal_code: z.string().trim().min(1).max(40),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
      .transform((c) => c.toUpperCase()),
  })
  .strict();

const FulfillBody = z
  .object({
    request_id: z.string().min(1).max(200),
    location_id: z.string().regex(/^po_[0-9]{1,18}$/, 'must be po_<number>, e.g. po_543'),
    address: AddressBody,
  })
  .strict();

const read = { ...GIFT_READ, tag: 'lockboxes', versions: ['2026-04-01'] } as const;

export const lockboxRoutes = [
  defineRoute({
    ...read,
    operationId: 'listLockboxes',
    method: 'get',
    path: '/v1/lockboxes',
    summary: "List the nonprofit's lockboxes, newest first",
    query: PageQuery,
    response: z.object({ results: z.array(Lockbox), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await lockboxesPage(db, caller, decodeCursor(query.page_token, 'page_token'), query.limit);
      return listPage(rows, query.limit, toLockbox, 'next_page_token');
    },
  }),
  defineRoute({
    ...read,
    operationId: 'getLockbox',
    method: 'get',
    path: '/v1/lockboxes/:id',
    summary: "Get one of the nonprofit's lockboxes",
    params: z.object({ id: z.string().min(1).max(100) }),
    response: Lockbox,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await lockboxOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The lockbox');
      return toLockbox(row);
    },
  }),
  defineRoute({
    operationId: 'provisionMailbox',
    method: 'post',
    path: '/v1/lockboxes/fulfill_request',
    summary: "A lockbox provider's answer to a PO box request: the box's location and address (once per request)",
    tag: 'mailbox',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'mailbox',
    access: 'write',
    credentials: 'any',
    callers: LOCKBOX_PROVIDERS,
    body: FulfillBody,
    // The published success is 200 with no content.
    status: 200,
    response: z.undefined(),
    errors: [400, 401, 403],
    async handler({ db, caller, body }) {
      const input = body as z.output<typeof FulfillBody>;
      await fulfillLockboxRequest(db, caller, { requestId: input.request_id, locationId: input.location_id, address: input.address });
    },
  }),
];
