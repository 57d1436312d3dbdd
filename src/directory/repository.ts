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

/**
 * Turns off the triggers that keep directory_words for the rest of `trx` (migration
 * 20261129200000): a batched import would update most words once per batch. Call
 * recountDirectoryWords before the transaction commits.
 */
export async function deferDirectoryWords(trx: Trx): Promise<void> {
  await sql`select set_config('almoner.directory_words', 'recount', true)`.execute(trx);
}

/** Counts directory_words afresh from every name (about 3 s for 1,000,000 names). */
export async function recountDirectoryWords(trx: Trx): Promise<void> {
  await sql`delete from directory_words`.execute(trx);
  await sql`insert into directory_words (word, names)
    select w, count(*) from directory_organizations, lateral (select distinct w from unnest(search_words) as w) as u
    where w <> '' group by w`.execute(trx);
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
 * Rules out reading the table for the search's transaction: a LIMITed filter over it is cheap only
 * when matches are as common as the planner guesses, and a rare word would then read every name.
 */
export async function useSearchSettings(trx: Trx): Promise<void> {
  await sql`select set_config('enable_seqscan', 'off', true)`.execute(trx);
}

/**
 * How many candidates each of the search's index scans takes (docs/directory.md, "How search
 * ranks"): the search ranks at most three times this many names, however many match.
 */
export const DIRECTORY_SEARCH_CANDIDATES = 100;
/** The directory words a typed prefix stands for, commonest first (docs/directory.md). */
export const PREFIX_WORDS = 50;
/** The corrections a misspelt word stands for, closest first. */
export const CORRECTIONS = 3;
/** A query's shorter words ("of", "the") may be missing from a name in the last candidate scan. */
const MAIN_WORD_LENGTH = 4;
/** Query words that choose candidates (all of them still rank): a longer query keeps its first and last. */
const CANDIDATE_WORDS = 8;

/** Edits a word may be from its correction: none up to 2 letters, 1 at 3, 2 from 4 ("bnak" → "bank"). */
export function allowedEdits(word: string): number {
  return word.length <= 2 ? 0 : word.length === 3 ? 1 : 2;
}

const sortedLetters = (text: string) => [...text].sort().join('');

/**
 * The directory words one query word stands for (docs/directory.md, "How search ranks"), and the
 * best of them, `best`, from directory_words: a whole word as typed, or for the last word (typed
 * on) the commonest words starting with it; failing that, the closest words by edit distance
 * among those with its first letter (a swapped pair of letters counts as one edit), for the last
 * word against their start. Run only while the prefix scan found fewer than `limit` names.
 */
function alternatives(word: string, last: boolean, limit: number): RawBuilder<unknown> {
  const k = allowedEdits(word);
  const compared = last ? sql`left(word, ${word.length})` : sql`word`;
  const first = word.slice(0, 1);
  const exact = last
    ? sql`select word from directory_words where word collate "C" like ${`${word}%`} order by names desc, word limit ${PREFIX_WORDS}`
    : sql`select word from directory_words where word = ${word}`;
  const distance = sql`case when length(${compared}) = ${word.length}
      and (select string_agg(c, '' order by c collate "C") from unnest(regexp_split_to_array(${compared}, '')) as c) = ${sortedLetters(word)}
    then least(levenshtein_less_equal(${compared}, ${word}, ${k}), 1) else levenshtein_less_equal(${compared}, ${word}, ${k}) end`;
  return sql`select coalesce(e.words, c.words) as words, case when e.words is null then c.words[1] else ${word} end as best
    from (select nullif(array(${exact}), '{}') as words) as e,
      lateral (select array(
        select word from directory_words
        where e.words is null and word collate "C" >= ${first} and word collate "C" < ${`${first}{`}
          and levenshtein_less_equal(${compared}, ${word}, ${k}) <= ${k}
        order by ${distance}, names desc, word limit ${CORRECTIONS}) as words) as c
    where (select count(*) from prefix) < ${limit}`;
}

/**
 * The name search (docs/directory.md, "How search ranks"), `query` already normalised as
 * search_name is. Candidates come from three LIMITed index scans, each asked only while those
 * before it are fewer than `limit` (a one-time filter: the scan is then never run): the first
 * names starting with the query in byte order (the prefix index), names holding one of each query
 * word's directory words (the GIN index on search_words: a few whole words' posting lists,
 * whatever the typos), then names holding those of its words of 4 letters or more. Only
 * those few are ranked: starting with the query first, then word similarity and similarity to the
 * corrected query (the name equal to it, at 1, leads) and name. The statement is returned
 * unexecuted so a test can EXPLAIN exactly it; run it after useSearchSettings.
 */
export function directoryNameSearch(query: string, limit: number): RawBuilder<DirectoryRow> {
  const prefix = `${query}%`;
  const k = DIRECTORY_SEARCH_CANDIDATES;
  const typed = query.split(' ');
  const chosen = typed.length > CANDIDATE_WORDS ? [...typed.slice(0, CANDIDATE_WORDS - 1), typed.at(-1)!] : typed;
  const lastIndex = chosen.length - 1;
  const steps = chosen.map((word, i) => sql`${sql.raw(`w${i}`)} as materialized (${alternatives(word, i === lastIndex, limit)})`);
  const hold = (indexes: number[]) =>
    sql.join(
      indexes.map((i) => sql`search_words && (select words from ${sql.raw(`w${i}`)})`),
      sql` and `,
    );
  const all = chosen.map((_, i) => i);
  // The words of 4 letters or more, when the query has shorter ones too ("of", "the", "inc").
  const long = all.filter((i) => chosen[i]!.length >= MAIN_WORD_LENGTH);
  const relaxed = long.length > 0 && long.length < all.length;
  // The query with each choosing word replaced by its best correction, for the ranking.
  const many = typed.length > CANDIDATE_WORDS;
  const parts = typed.map((word, j) => {
    const i = j === typed.length - 1 ? lastIndex : !many || j < CANDIDATE_WORDS - 1 ? j : undefined;
    return i === undefined ? sql`${word}::text` : sql`coalesce((select best from ${sql.raw(`w${i}`)}), ${word})`;
  });
  const corrected = sql`concat_ws(' ', ${sql.join(parts)})`;
  return sql<DirectoryRow>`
    with prefix as materialized (
      select ein from directory_organizations
      where search_name collate "C" like ${prefix}
      order by search_name collate "C"
      limit ${k}
    ), ${sql.join(steps)}, words as materialized (
      select ein from directory_organizations
      where ${hold(all)} and (select count(*) from prefix) < ${limit}
      limit ${k}
    ), main_words as materialized (
      select ein from directory_organizations
      where ${relaxed ? hold(long) : sql`false`}
        and (select count(*) from prefix) + (select count(*) from words) < ${limit}
      limit ${k}
    ), corrected as materialized (select ${corrected} as query)
    select d.* from directory_organizations d
    where d.ein in (select ein from prefix union select ein from words union select ein from main_words)
    order by d.search_name like ${prefix} desc,
      word_similarity((select query from corrected), d.search_name) desc,
      similarity((select query from corrected), d.search_name) desc,
      d.name, d.ein
    limit ${limit}`;
}

export async function searchDirectoryByName(trx: Trx, query: string, limit: number): Promise<DirectoryRow[]> {
  return (await directoryNameSearch(query, limit).execute(trx)).rows;
}
