import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

/**
 * Keyset pagination over (created_at desc, id desc): a page token names the last row
 * returned, so every row is walked exactly once even while rows are added.
 */
export interface Cursor {
  createdAt: Date;
  id: string;
}

/** Rows after the cursor in (created_at desc, id desc) order: one row comparison, index-friendly. */
export function beforeCursor(cursor: Cursor): RawBuilder<boolean> {
  return sql<boolean>`(created_at, id) < (${cursor.createdAt}, ${cursor.id})`;
}

/**
 * One page of `query`, newest first: the rows after `cursor` in (created_at desc, id desc)
 * order, one more than `limit` so the caller can tell whether another page follows.
 */
export function newestFirstPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  cursor: Cursor | undefined,
  limit: number,
) {
  return (cursor ? query.where(beforeCursor(cursor)) : query)
    .orderBy(sql.ref('created_at'), 'desc')
    .orderBy(sql.ref('id'), 'desc')
    .limit(limit + 1);
}
