import { z } from 'zod';
import { invalid } from '../../errors/domain-error.js';
import { recurringGrantOf, recurringGrantsPage, unintegratedGrantOf, unintegratedGrantsPage } from '../../giving/grants-service.js';
import { ownsConnect } from '../../giving/connects-service.js';
import { decodeUuidCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import type { Caller } from '../routing/caller.js';
import type { Db } from '../../db/database.js';
import { GIVING_CALLERS } from './callers.js';
import { RecurringGrant, toRecurringGrant, toUnintegratedGrant, UnintegratedGrant } from './recurring-view.js';

const ListQuery = z
  .object({
    connect_id: z.string().max(200).optional(),
    pageLimit: z.coerce.number().int().min(1).max(100).default(10),
    pageToken: z.string().max(200).optional(),
  })
  .strict();

const common = {
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grants',
  access: 'read',
  credentials: 'any',
  callers: GIVING_CALLERS,
} as const;

/** As GET /v1/grants: another organization's connect is a 400, not an empty list. */
async function checkConnect(db: Db, caller: Caller, connectId: string | undefined): Promise<void> {
  if (connectId && !(await ownsConnect(db, caller, connectId))) throw invalid('Invalid query: connect_id names no connect of the caller.');
}

const Id = z.object({ id: z.string().uuid({ message: 'must be a UUID' }) });

export const recurringUnintegratedRoutes = [
  defineRoute({
    ...common,
    operationId: 'list-recurring-grants',
    method: 'get',
    path: '/v1/recurring_grants',
    summary: "List the recurring grants of the caller's connects (connect_id filters to one)",
    tag: 'recurring_grants',
    query: ListQuery,
    response: z.object({ results: z.array(RecurringGrant), nextPageToken: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      await checkConnect(db, caller, query.connect_id);
      const rows = await recurringGrantsPage(db, caller, query.connect_id, decodeUuidCursor(query.pageToken, 'pageToken'), query.pageLimit);
      return listPage(rows, query.pageLimit, toRecurringGrant, 'nextPageToken');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'get-recurring-grant',
    method: 'get',
    path: '/v1/recurring_grants/:id',
    summary: "Get one of the caller's recurring grants",
    tag: 'recurring_grants',
    params: Id,
    response: RecurringGrant,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await recurringGrantOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The recurring grant');
      return toRecurringGrant(row);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'list-unintegrated-grants',
    method: 'get',
    path: '/v1/unintegrated_grants',
    summary: "List the unintegrated grants of the caller's connects (connect_id filters to one)",
    tag: 'unintegrated_grants',
    query: ListQuery,
    response: z.object({ results: z.array(UnintegratedGrant), nextPageToken: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      await checkConnect(db, caller, query.connect_id);
      const rows = await unintegratedGrantsPage(
        db,
        caller,
        query.connect_id,
        decodeUuidCursor(query.pageToken, 'pageToken'),
        query.pageLimit,
      );
      return listPage(rows, query.pageLimit, toUnintegratedGrant, 'nextPageToken');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'get-unintegrated-grant',
    method: 'get',
    path: '/v1/unintegrated_grants/:id',
    summary: "Get one of the caller's unintegrated grants",
    tag: 'unintegrated_grants',
    params: Id,
    response: UnintegratedGrant,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await unintegratedGrantOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The unintegrated grant');
      return toUnintegratedGrant(row);
    },
  }),
];
