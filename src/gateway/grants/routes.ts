import { z } from 'zod';
import { decodeUuidCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { invalid } from '../../errors/domain-error.js';
import { defineRoute } from '../routing/route-spec.js';
import { grantOf, grantsPage, isCallersConnect } from './service.js';
import { GrantByVersion, grantView, grantViews } from '../giving/grant-view.js';

/** Nonprofits and platforms read their connects' grants; fund providers, as before, see none of theirs here. */
const GRANT_READERS = ['nonprofit', 'platform', 'fund_provider'] as const;

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
    callers: GRANT_READERS,
    query: z
      .object({
        connect_id: z.string().max(200).optional(),
        pageLimit: z.coerce.number().int().min(1).max(100).default(10),
        pageToken: z.string().max(200).optional(),
      })
      .strict(),
    response: {
      '2026-04-01': z.object({ results: z.array(GrantByVersion['2026-04-01']), nextPageToken: z.string().nullable() }),
      '2026-01-15': z.object({ results: z.array(GrantByVersion['2026-01-15']), nextPageToken: z.string().nullable() }),
    },
    errors: [400, 401, 403],
    async handler({ db, caller, query, version }) {
      // Another organization's (or environment's) connect is unknown here: an empty list would
      // hide a typo. A 400, as for any invalid parameter, since the published operation lists
      // no 404; it says the same for an id that exists nowhere, so it reveals nothing.
      if (query.connect_id && !(await isCallersConnect(db, caller, query.connect_id)))
        throw invalid('Invalid query: connect_id names no connect of the caller.');
      const rows = await grantsPage(db, caller, query.connect_id, decodeUuidCursor(query.pageToken, 'pageToken'), query.pageLimit);
      const page = listPage(rows, query.pageLimit, (row) => row, 'nextPageToken|null');
      return { ...page, results: await grantViews(db, page.results, version) };
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
    callers: GRANT_READERS,
    params: z.object({ id: z.string().uuid({ message: 'must be a UUID' }) }),
    response: GrantByVersion,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, version }) {
      const row = await grantOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The grant');
      return grantView(db, row, version);
    },
  }),
];
