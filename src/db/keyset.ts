import { sql, type RawBuilder } from 'kysely';

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
