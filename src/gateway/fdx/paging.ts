import { z } from 'zod';

/**
 * FDX paging (docs/api.md, "FDX bank-data API", Paging): `limit` is clamped to 10–100 (default 10),
 * as the published document says, rather than refused. `pageKey` is the id (a UUID, as the document
 * types it) of the first row of the next page; the lists are keyset-paged from that row, so a walk
 * sees every row exactly once even while rows are added.
 */
export const MIN_LIMIT = 10;
export const MAX_LIMIT = 100;

export const limitParam = z.coerce
  .number({ error: 'must be a whole number' })
  .int({ error: 'must be a whole number' })
  .optional()
  .transform((value) => Math.min(MAX_LIMIT, Math.max(MIN_LIMIT, value ?? MIN_LIMIT)))
  .describe('Results per page, clamped to 10–100 (default 10)');

export const pageKeyParam = z
  .string()
  .uuid({ message: 'must be a nextPageKey this API returned' })
  .optional()
  .describe('The nextPageKey of the previous page');

export interface FdxPage {
  nextPageKey?: string;
  totalElements: number;
}

export const PageSchema = z.object({ nextPageKey: z.string().optional(), totalElements: z.number().int() });

/** Rows fetched with limit + 1: the extra row, if any, is where the next page starts. */
export function fdxPage<T extends { id: string }>(rows: T[], limit: number, totalElements: number): { items: T[]; page: FdxPage } {
  if (rows.length <= limit) return { items: rows, page: { totalElements } };
  return { items: rows.slice(0, limit), page: { nextPageKey: rows[limit]!.id, totalElements } };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are UUIDs: anything else cannot name a row (and must not reach Postgres as one). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
