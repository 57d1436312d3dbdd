import { z } from 'zod';
import { invalid } from '../../errors/domain-error.js';
import { dafOf, dafsPage, isSupported, type DafCursor, type DafRow } from '../../giving/dafs-service.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import type { OrganizationKind } from '../../db/schema.js';

/** Any organization kind may read the DAF directory (docs/giving.md, "DAFs"). */
const EVERY_KIND: readonly OrganizationKind[] = ['nonprofit', 'platform', 'fund_provider', 'grantmaker', 'lockbox_provider'];

const Daf = z.object({
  id: z.string(),
  orgName: z.string(),
  address: z.string(),
  address2: z.string(),
  city: z.string(),
  state: z.string(),
  zip: z.string(),
  supported: z.boolean(),
  minimumGrantAmount: z.number().int().describe('Cents'),
  institutionDown: z.boolean(),
});

function toDaf(row: DafRow) {
  return {
    id: row.id,
    orgName: row.org_name,
    address: row.address,
    address2: row.address2,
    city: row.city,
    state: row.state,
    zip: row.zip,
    supported: isSupported(row),
    minimumGrantAmount: Number(row.minimum_grant_amount),
    institutionDown: row.institution_down,
  };
}

/** The DAF list's page token: the last row's name and id (the list is in name order). */
export function encodeDafCursor(cursor: DafCursor): string {
  return Buffer.from(JSON.stringify([cursor.name, cursor.id])).toString('base64url');
}

export function decodeDafCursor(token: string | undefined): DafCursor | undefined {
  if (!token) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value[1])
    )
      return { name: value[0], id: value[1] };
  } catch {
    /* below */
  }
  throw invalid('pageToken is not a page token this API returned.');
}

const common = {
  tag: 'Donor Advised Funds',
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grants',
  access: 'read',
  credentials: 'any',
  callers: EVERY_KIND,
} as const;

export const dafRoutes = [
  defineRoute({
    ...common,
    operationId: 'list-dafs',
    method: 'get',
    path: '/v1/dafs',
    summary: 'List the donor-advised funds, in name order',
    query: z
      .object({
        supportedOnly: z.enum(['true', 'false']).default('false'),
        query: z.string().max(200).optional(),
        pageLimit: z.coerce.number().int().min(1).max(100).default(10),
        pageToken: z.string().max(1000).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(Daf), nextPageToken: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const limit = query.pageLimit;
      const rows = await dafsPage(
        db,
        caller.environment,
        { supportedOnly: query.supportedOnly === 'true', query: query.query },
        decodeDafCursor(query.pageToken),
        limit,
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        results: page.map(toDaf),
        ...(rows.length > limit && last ? { nextPageToken: encodeDafCursor({ name: last.org_name, id: last.id }) } : {}),
      };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'get-daf',
    method: 'get',
    path: '/v1/dafs/:id',
    summary: 'Get one donor-advised fund',
    params: z.object({ id: z.string().min(1).max(100) }),
    response: Daf,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await dafOf(db, caller.environment, params.id);
      if (!row) throw resourceNotFound('The DAF');
      return toDaf(row);
    },
  }),
];
