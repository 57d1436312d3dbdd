import { z } from 'zod';
import { programOf, programsPage, type ProgramRow } from '../../grantmaking/accounts-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GRANTMAKERS, scopeOf } from './callers.js';

const status = z.enum(['enabled', 'disabled']);
const Program = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  grant_disbursement_status: status,
  gift_processing_status: status,
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

function toProgram(row: ProgramRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? undefined,
    grant_disbursement_status: row.grant_disbursement_status,
    gift_processing_status: row.gift_processing_status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const common = {
  tag: 'programs',
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grantmaking',
  access: 'read',
  credentials: 'any',
  callers: GRANTMAKERS,
} as const;

export const programRoutes = [
  defineRoute({
    ...common,
    operationId: 'list-programs',
    method: 'get',
    path: '/v1/programs',
    summary: "List the grantmaker's programs, newest first",
    query: z
      .object({
        limit: z.coerce.number().int().min(1).max(100).default(100),
        cursor: z.string().max(200).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(Program), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await programsPage(db, scopeOf(caller), decodeCursor(query.cursor, 'cursor'), query.limit);
      return listPage(rows, query.limit, toProgram, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'get-program',
    method: 'get',
    path: '/v1/programs/:id',
    summary: "Get one of the grantmaker's programs",
    params: z.object({ id: z.string().min(1).max(100) }),
    response: Program,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await programOf(db, scopeOf(caller), params.id);
      if (!row) throw resourceNotFound('The program');
      return toProgram(row);
    },
  }),
];
