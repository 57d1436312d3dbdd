import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { demoEin } from '../../src/demo/bmf-file.js';
import type { HttpRequestSpec } from './load.js';

/**
 * The directory scenarios' queries and sizes (docs/benchmarks.md, "The organizations directory"):
 * typeahead name queries as a grantmaker types them (prefixes of the demo file's words, and
 * typos), and EIN lookups of organizations the file holds.
 */

/** Name queries: prefixes as typed, whole words, and a misspelt letter or a transposed pair. */
export const TYPEAHEAD_QUERIES: readonly string[] = [
  'riv',
  'rivers',
  'riverside fo',
  'food ba',
  'food bank',
  'food bnak',
  'hilltop',
  'hilltop comm',
  'hiltop library',
  'maple valley',
  'maple valey yo',
  'friends of the',
  'friends of the cedar',
  'comunity center',
  'animal shelter',
  'animl shelter',
  'youth league',
  'senior serv',
  'lakeside arts',
  'pine ridge hospice',
  'cedar creek',
  'springfeild',
  'veterans outreach',
  'literacy council',
];

/** The EIN lookup's queries: `n` EINs of the file, spread over it, as a grantmaker types them (12-3456789). */
export function einQueries(firstEin: number, rows: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const ein = demoEin(firstEin, Math.floor((i * rows) / n + (i % 7)) % rows);
    return `${ein.slice(0, 2)}-${ein.slice(2)}`;
  });
}

/** GET /v1/organizations/search requests with the grantmaker's key, cycling over `queries`. */
export function searchRequests(key: string, queries: readonly string[]): () => HttpRequestSpec {
  let i = 0;
  return () => {
    i += 1;
    return {
      method: 'GET',
      path: `/v1/organizations/search?q=${encodeURIComponent(queries[i % queries.length]!)}`,
      headers: { authorization: `Bearer ${key}` },
    };
  };
}

/** How many results each query finds now (a check that the queries hit, reported with the row). */
export async function resultCounts(origin: string, key: string, queries: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const q of queries) {
    const res = await fetch(`${origin}/v1/organizations/search?q=${encodeURIComponent(q)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as { results?: unknown[] };
    counts[q] = res.status === 200 ? (body.results?.length ?? 0) : -res.status;
  }
  return counts;
}

export interface DirectorySizes {
  rows: number;
  table_bytes: number;
  words_index_bytes: number;
  dictionary_words: number;
  total_bytes: number;
}

/** The directory's row count, its table's size (pg_table_size: heap and TOAST), the words index's (pg_relation_size), the words table's and all of it. */
export async function directorySizes(db: Db): Promise<DirectorySizes> {
  const { rows } = await sql<{
    rows: string;
    table_bytes: string;
    words_index_bytes: string;
    total_bytes: string;
    dictionary_words: string;
  }>`
    select (select count(*) from directory_organizations) as rows,
      pg_table_size('directory_organizations') as table_bytes,
      pg_relation_size('directory_organizations_search_words_idx') as words_index_bytes,
      pg_total_relation_size('directory_organizations') as total_bytes,
      (select count(*) from directory_words) as dictionary_words`.execute(db);
  const r = rows[0]!;
  return {
    rows: Number(r.rows),
    table_bytes: Number(r.table_bytes),
    words_index_bytes: Number(r.words_index_bytes),
    total_bytes: Number(r.total_bytes),
    dictionary_words: Number(r.dictionary_words),
  };
}

export const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
