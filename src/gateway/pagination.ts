import { sql, type RawBuilder } from 'kysely';
import { badRequest } from './problems.js';

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

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id])).toString('base64url');
}

export function decodeCursor(token: string | undefined, parameter: string): Cursor | undefined {
  if (token === undefined || token === '') return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      const createdAt = new Date(value[0]);
      if (!Number.isNaN(createdAt.getTime()) && value[1].length <= 100) return { createdAt, id: value[1] };
    }
  } catch {
    /* fall through */
  }
  throw badRequest(`${parameter} is not a page token this API returned.`);
}

/** Rows fetched with limit + 1: the extra row says whether a next page exists. */
export function page<T extends { created_at: Date; id: string }>(rows: T[], limit: number): { items: T[]; next?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  return { items, next: encodeCursor({ createdAt: last.created_at, id: last.id }) };
}
