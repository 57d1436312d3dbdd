import { z } from 'zod';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { invalid } from '../../errors/domain-error.js';
import { defineRoute } from '../routing/route-spec.js';
import { grantOf, grantsPage, isCallersConnect, type GrantRow } from './service.js';

const Grant = z.object({
  id: z.string().uuid(),
  trackingId: z.string(),
  workflowSessionId: z.string().uuid(),
  fundId: z.string(),
  externalGrantId: z.string().optional(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  amount: z.number().int().describe('Whole cents'),
  status: z.string(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  note: z.string().optional(),
  paymentChannel: z.enum(['dafpay_network', 'direct']),
});

function optional<T extends string>(key: T, value: string | null) {
  return value === null ? {} : ({ [key]: value } as Record<T, string>);
}

function toGrant(row: GrantRow) {
  return {
    id: row.id,
    trackingId: row.tracking_id,
    workflowSessionId: row.workflow_session_id,
    fundId: row.fund_id,
    ...optional('externalGrantId', row.external_grant_id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    amount: Number(row.amount),
    status: row.status,
    ...optional('firstName', row.first_name),
    ...optional('lastName', row.last_name),
    ...optional('email', row.email),
    ...optional('phone', row.phone),
    ...optional('note', row.note),
    paymentChannel: row.payment_channel,
  };
}

export const grantRoutes = [
  defineRoute({
    operationId: 'list-grants',
    method: 'get',
    path: '/v1/grants',
    summary: "List the grants of the caller's connects (connect_id filters to one)",
    tag: 'Grants',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'grants',
    access: 'read',
    credentials: 'any',
    query: z
      .object({
        connect_id: z.string().max(200).optional(),
        pageLimit: z.coerce.number().int().min(1).max(100).default(10),
        pageToken: z.string().max(200).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(Grant), nextPageToken: z.string().nullable() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      // Another organization's (or environment's) connect is unknown here: an empty list would
      // hide a typo. A 400, as for any invalid parameter, since the published operation lists
      // no 404; it says the same for an id that exists nowhere, so it reveals nothing.
      if (query.connect_id && !(await isCallersConnect(db, caller, query.connect_id)))
        throw invalid('Invalid query: connect_id names no connect of the caller.');
      const rows = await grantsPage(db, caller, query.connect_id, decodeCursor(query.pageToken, 'pageToken'), query.pageLimit);
      return listPage(rows, query.pageLimit, toGrant, 'nextPageToken|null');
    },
  }),
  defineRoute({
    operationId: 'get-grant',
    method: 'get',
    path: '/v1/grants/:id',
    summary: "Get one of the caller's grants",
    tag: 'Grants',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'grants',
    access: 'read',
    credentials: 'any',
    params: z.object({ id: z.string().uuid({ message: 'must be a UUID' }) }),
    response: Grant,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await grantOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The grant');
      return toGrant(row);
    },
  }),
];
