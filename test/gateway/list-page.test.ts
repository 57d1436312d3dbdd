import { describe, expect, it } from 'vitest';
import { decodeCursor, listPage } from '../../src/gateway/routing/pagination.js';

const row = (n: number) => ({ id: `id-${n}`, created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 60 - n)) });
const rows = (count: number) => Array.from({ length: count }, (_, i) => row(i));

describe('listPage: the one list body', () => {
  it('a full page plus the look-ahead row gives a token naming the last row returned', () => {
    const body = listPage(rows(3), 2, (r) => r.id, 'next_page_token');
    expect(body.results).toEqual(['id-0', 'id-1']);
    expect(decodeCursor(body.next_page_token, 'page_token')).toEqual({ createdAt: row(1).created_at, id: 'id-1' });
  });

  it('the last page omits the member in the "omit" styles', () => {
    expect(listPage(rows(2), 2, (r) => r.id, 'next_page_token')).toEqual({ results: ['id-0', 'id-1'] });
    expect(listPage(rows(0), 5, (r) => r.id, 'nextPageToken')).toEqual({ results: [] });
  });

  it('the last page says null in the "|null" styles, under the named key', () => {
    expect(listPage(rows(1), 2, (r) => r.id, 'nextPageToken|null')).toEqual({ results: ['id-0'], nextPageToken: null });
    expect(listPage(rows(1), 2, (r) => r.id, 'next_page_token|null')).toEqual({ results: ['id-0'], next_page_token: null });
    const more = listPage(rows(3), 1, (r) => r.id, 'nextPageToken|null');
    expect(Object.keys(more)).toEqual(['results', 'nextPageToken']);
    expect(typeof more.nextPageToken).toBe('string');
  });
});
