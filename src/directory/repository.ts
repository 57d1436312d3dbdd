import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Executor, Trx } from '../db/executor.js';
import type { DirectoryOnboardingsTable, DirectoryOrganizationsTable, DirectorySource, SandboxSettlement } from '../db/schema-directory.js';
import type { DirectoryRecord } from './bmf-layout.js';

/** The directory's queries (docs/directory.md): the import's batched upsert, the EIN lookup and the name search. */

export type DirectoryRow = Selectable<DirectoryOrganizationsTable>;

/** The columns an import writes, in one order for the unnest below and the change check. */
const RECORD_COLUMNS = [
  'ein',
  'name',
  'sort_name',
  'in_care_of',
  'street',
  'city',
  'state',
  'postal_code',
  'group_exemption_number',
  'subsection_code',
  'affiliation_code',
  'classification_code',
  'ruling',
  'deductibility_code',
  'foundation_code',
  'organization_code',
  'exempt_status_code',
  'filing_requirement_code',
  'ntee_code',
] as const satisfies readonly (keyof DirectoryRecord)[];

const WRITTEN = [...RECORD_COLUMNS, 'source'] as const;

/**
 * Inserts the batch's organizations and updates those that changed, in one statement: one array
 * parameter per column (unnest), so a batch of 1,000 rows is 20 parameters, not 20,000. A row
 * whose every field is as stored is left alone (its updated_at too). `xmax = 0` tells a
 * row the statement inserted from one it updated; rows it left alone are not returned.
 */
export async function upsertDirectoryBatch(
  trx: Trx,
  records: readonly DirectoryRecord[],
  source: DirectorySource,
): Promise<{ inserted: number; updated: number }> {
  if (records.length === 0) return { inserted: 0, updated: 0 };
  const list = (names: readonly string[], prefix = '') => sql.raw(names.map((n) => `${prefix}${n}`).join(', '));
  const arrays = RECORD_COLUMNS.map((column) => sql`${records.map((r) => r[column])}::text[]`);
  const { rows } = await sql<{ inserted: boolean }>`
    insert into directory_organizations (${list(WRITTEN)})
    select u.*, ${source} from unnest(${sql.join(arrays)}) as u(${list(RECORD_COLUMNS)})
    on conflict (ein) do update set ${sql.raw(WRITTEN.map((c) => `${c} = excluded.${c}`).join(', '))}, updated_at = now()
    where (${list(WRITTEN, 'directory_organizations.')}) is distinct from (${list(WRITTEN, 'excluded.')})
    returning (xmax = 0) as inserted`.execute(trx);
  const inserted = rows.filter((r) => r.inserted).length;
  return { inserted, updated: rows.length - inserted };
}

export function findDirectoryOrganization(ex: Executor, ein: string): Promise<DirectoryRow | undefined> {
  return ex.selectFrom('directory_organizations').selectAll().where('ein', '=', ein).executeTakeFirst();
}

export function findDirectoryOrganizationById(ex: Executor, id: string): Promise<DirectoryRow | undefined> {
  return ex.selectFrom('directory_organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findDirectoryOrganizationsByIds(ex: Executor, ids: readonly string[]): Promise<DirectoryRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return ex.selectFrom('directory_organizations').selectAll().where('id', 'in', ids).execute();
}

/** Which of `eins` a member nonprofit of Almoner has (isClaimedEin, for many). */
export async function claimedEins(ex: Executor, eins: readonly string[]): Promise<Set<string>> {
  if (eins.length === 0) return new Set();
  const rows = await ex.selectFrom('organizations').select('ein').where('ein', 'in', eins).where('kind', '=', 'nonprofit').execute();
  return new Set(rows.map((r) => r.ein));
}

/**
 * Whether a member nonprofit of Almoner has this EIN: the directory's organization and the
 * member are then one Organization, linked by EIN (docs/directory.md, "Organization ids").
 */
export async function isClaimedEin(ex: Executor, ein: string): Promise<boolean> {
  const row = await ex.selectFrom('organizations').select('id').where('ein', '=', ein).where('kind', '=', 'nonprofit').executeTakeFirst();
  return row !== undefined;
}

export type OnboardingRow = Selectable<DirectoryOnboardingsTable>;

/** Records the rail unless one is recorded already; returns the organization's record either way. */
export async function recordOnboarding(
  trx: Trx,
  organizationId: string,
  settlement: SandboxSettlement,
  onboardedBy: string,
): Promise<OnboardingRow> {
  await trx
    .insertInto('directory_onboardings')
    .values({ organization_id: organizationId, settlement, onboarded_by: onboardedBy })
    .onConflict((oc) => oc.column('organization_id').doNothing())
    .execute();
  return trx.selectFrom('directory_onboardings').selectAll().where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
}

/**
 * How close a query's trigrams must come to a stretch of a name (word_similarity) for the name to
 * match: 0.5 lets one transposed pair of letters through ("food bnak" scores 0.6 against "food
 * bank …") and keeps unrelated words out ("good books" scores 0.3).
 */
export const WORD_SIMILARITY_THRESHOLD = 0.5;
/**
 * The bar for the search's first typo-tolerant candidates (`<<%`, strict word similarity: whole
 * words): "hiltop library" scores 0.82 against "hilltop … library"; the looser `<%` is asked
 * only when these are too few (docs/directory.md, "How search ranks").
 */
export const STRICT_WORD_SIMILARITY_THRESHOLD = 0.7;

/**
 * Sets both thresholds for the search's transaction only, so the operators and the trigram index
 * use them, and rules out reading the table: a LIMITed filter over it is cheap only when matches
 * are as common as the planner guesses, and a rare typo would then read every name.
 */
export async function useSearchThresholds(trx: Trx): Promise<void> {
  await sql`select set_config('pg_trgm.word_similarity_threshold', ${String(WORD_SIMILARITY_THRESHOLD)}, true),
    set_config('pg_trgm.strict_word_similarity_threshold', ${String(STRICT_WORD_SIMILARITY_THRESHOLD)}, true),
    set_config('enable_seqscan', 'off', true)`.execute(trx);
}

/**
 * How many candidates each of the search's index scans takes (docs/directory.md, "How search
 * ranks"): the search ranks at most three times this many names, however many match.
 */
export const DIRECTORY_SEARCH_CANDIDATES = 100;

/**
 * The name search (docs/directory.md, "How search ranks"), `query` already normalised as
 * search_name is. Candidates come from LIMITed scans, each asked only while those before it are
 * fewer than `limit` (a one-time filter: the scan is then never run): the first names starting
 * with the query in byte order (the prefix index), then names whose whole words come close to it
 * (`<<%`), then names with any close stretch (`<%`), both from the trigram index. Only those few
 * are ranked: starting with the query first, then word similarity, similarity (the name equal to
 * the query, at 1, leads) and name. The statement is returned unexecuted so a test can EXPLAIN
 * exactly it; run it after useSearchThresholds.
 */
export function directoryNameSearch(query: string, limit: number): RawBuilder<DirectoryRow> {
  const prefix = `${query}%`;
  const k = DIRECTORY_SEARCH_CANDIDATES;
  return sql<DirectoryRow>`
    with prefix as materialized (
      select ein from directory_organizations
      where search_name collate "C" like ${prefix}
      order by search_name collate "C"
      limit ${k}
    ), words as materialized (
      select ein from directory_organizations
      where ${query} <<% search_name and (select count(*) from prefix) < ${limit}
      limit ${k}
    ), stretches as materialized (
      select ein from directory_organizations
      where ${query} <% search_name
        and (select count(*) from prefix) + (select count(*) from words) < ${limit}
      limit ${k}
    )
    select d.* from directory_organizations d
    where d.ein in (select ein from prefix union select ein from words union select ein from stretches)
    order by d.search_name like ${prefix} desc,
      word_similarity(${query}, d.search_name) desc,
      similarity(${query}, d.search_name) desc,
      d.name, d.ein
    limit ${limit}`;
}

export async function searchDirectoryByName(trx: Trx, query: string, limit: number): Promise<DirectoryRow[]> {
  return (await directoryNameSearch(query, limit).execute(trx)).rows;
}
