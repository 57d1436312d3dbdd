import type { Cursor } from '../../db/keyset.js';
import { invalid } from '../../errors/domain-error.js';

/**
 * Page tokens for keyset pagination over (created_at desc, id desc): a token names the last
 * row returned; the repositories apply it with db/keyset.ts's beforeCursor.
 */
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
  throw invalid(`${parameter} is not a page token this API returned.`);
}

/**
 * How a list names its next-page token, per published document: snake_case (DAF, donations) or
 * camelCase (grants, events), and on the last page either `null` or no member at all.
 */
export type PageTokenStyle = 'next_page_token' | 'next_page_token|null' | 'nextPageToken' | 'nextPageToken|null';
type TokenKey<S extends PageTokenStyle> = S extends `${infer K}|null` ? K : S;
type TokenMember<S extends PageTokenStyle> = S extends `${string}|null`
  ? { [K in TokenKey<S>]: string | null }
  : { [K in TokenKey<S>]?: string };

/**
 * The one list body: rows were fetched with limit + 1, and the extra row says whether a next page
 * exists; its token names the last row returned.
 */
export function listPage<T extends { created_at: Date; id: string }, V, S extends PageTokenStyle>(
  rows: T[],
  limit: number,
  view: (row: T) => V,
  style: S,
): { results: V[] } & TokenMember<S> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const next = rows.length > limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : undefined;
  const [key, whenLast] = style.split('|') as [string, string | undefined];
  const token = next ?? (whenLast === 'null' ? null : undefined);
  return { results: items.map(view), ...(token === undefined ? {} : { [key]: token }) } as { results: V[] } & TokenMember<S>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** decodeCursor for lists whose ids are UUIDs: a token naming another id is refused (400), never sent to the database. */
export function decodeUuidCursor(token: string | undefined, parameter: string): Cursor | undefined {
  const cursor = decodeCursor(token, parameter);
  if (cursor && !UUID.test(cursor.id)) throw invalid(`${parameter} is not a page token this API returned.`);
  return cursor;
}
