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
 * bank …") and keeps unrelated words out ("good books" scores 0.3). Set for the search's
 * transaction only, so the `<%` operator and the trigram index both use it.
 */
export const WORD_SIMILARITY_THRESHOLD = 0.5;

export async function useWordSimilarityThreshold(trx: Trx, threshold: number): Promise<void> {
  await sql`select set_config('pg_trgm.word_similarity_threshold', ${String(threshold)}, true)`.execute(trx);
}

/**
 * The name search (docs/directory.md, "How search ranks"), `query` already normalised as
 * search_name is: names that start with it or hold a stretch close to it (`<%`, both served by
 * the trigram index), those that start with it first, then by word similarity, similarity
 * (shorter, closer names first: the name equal to the query, at 1, leads) and name. The
 * statement is returned unexecuted so a test can EXPLAIN exactly it.
 */
export function directoryNameSearch(query: string, limit: number): RawBuilder<DirectoryRow> {
  return sql<DirectoryRow>`
    select * from directory_organizations
    where search_name like ${`${query}%`} or ${query} <% search_name
    order by search_name like ${`${query}%`} desc,
      word_similarity(${query}, search_name) desc,
      similarity(${query}, search_name) desc,
      name, ein
    limit ${limit}`;
}

export async function searchDirectoryByName(trx: Trx, query: string, limit: number): Promise<DirectoryRow[]> {
  return (await directoryNameSearch(query, limit).execute(trx)).rows;
}
