import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBmfFile } from '../../src/directory/import-service.js';
import { DIRECTORY_SEARCH_CANDIDATES, directoryNameSearch, useSearchSettings } from '../../src/directory/repository.js';
import { searchName } from '../../src/directory/search-name.js';
import { DIRECTORY_SEARCH_LIMIT, directoryOrganization, searchDirectory } from '../../src/directory/search-service.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;

/** Words for the filler organizations: none shares a trigram-heavy stretch with the names searched below. */
const WORDS = ['MAPLE', 'RIVER', 'SUMMIT', 'PRAIRIE', 'LANTERN', 'HARMONY', 'CEDAR', 'VALLEY', 'WILLOW', 'COMPASS', 'MERIDIAN', 'JUNIPER'];
const KINDS = ['SOCIETY', 'ALLIANCE', 'TRUST', 'GUILD', 'INSTITUTE', 'CLUB', 'LEAGUE'];

const NAMED = [
  bmfLine({ EIN: '840772672', NAME: 'FOOD BANK OF THE ROCKIES' }),
  bmfLine({ EIN: '237353346', NAME: 'REGIONAL FOOD BANK OF OKLAHOMA' }),
  bmfLine({ EIN: '010101010', NAME: 'THE FOOD BANK' }),
  bmfLine({ EIN: '131635294', NAME: 'CITY HARVEST' }),
  bmfLine({ EIN: '131635295', NAME: 'CITY HARVEST INC' }),
  bmfLine({ EIN: '131635296', NAME: 'NEW YORK CITY HARVESTERS ASSOCIATION' }),
  ...Array.from({ length: 25 }, (_, i) => bmfLine({ EIN: String(500_000_000 + i), NAME: `PUBLIC LIBRARY FRIENDS ${i}` })),
];

beforeAll(async () => {
  t = await createTestDatabase();
  // Names around the ones searched, so a query has more to pass over than its answers.
  const filler = Array.from({ length: 1_000 }, (_, i) =>
    bmfLine({
      EIN: String(600_000_000 + i),
      NAME: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} ${KINDS[i % KINDS.length]} ${i}`,
    }),
  );
  await importBmfFile(t.db, writeBmfFile([...NAMED, ...filler]));
});
afterAll(async () => t?.drop());

const names = async (q: string, limit?: number) => (await searchDirectory(t.db, { q, ...(limit ? { limit } : {}) })).map((o) => o.name);

describe('directory search', () => {
  it('finds an organization by EIN with or without the dash, exactly, from q or ein', async () => {
    for (const search of [{ q: '84-0772672' }, { q: '840772672' }, { ein: '84-0772672' }, { ein: '840772672', q: '84-0772672' }]) {
      const found = await searchDirectory(t.db, search);
      expect(found.map((o) => o.ein)).toEqual(['840772672']);
      expect(found[0]).toMatchObject({ name: 'FOOD BANK OF THE ROCKIES', city: 'DENVER', state: 'CO' });
      expect(found[0]).not.toHaveProperty('search_name');
    }
    expect(await searchDirectory(t.db, { q: '99-9999999' })).toEqual([]);
    // Two different EINs name no one organization.
    expect(await searchDirectory(t.db, { q: '840772672', ein: '237353346' })).toEqual([]);
    expect((await directoryOrganization(t.db, '84-0772672'))?.name).toBe('FOOD BANK OF THE ROCKIES');
    expect(await directoryOrganization(t.db, '999999999')).toBeUndefined();
  });

  it('finds "food bnak" (letters swapped) and "food ba" (a prefix), the name that starts with the query first', async () => {
    // No name starts with "food bnak": the shortest, closest name leads.
    expect(await names('food bnak')).toEqual(['THE FOOD BANK', 'FOOD BANK OF THE ROCKIES', 'REGIONAL FOOD BANK OF OKLAHOMA']);
    // "THE FOOD BANK" is as close a match and shorter, but the name that starts with the query comes first.
    expect(await names('food ba')).toEqual(['FOOD BANK OF THE ROCKIES', 'THE FOOD BANK', 'REGIONAL FOOD BANK OF OKLAHOMA']);
    expect(await names('Food Bank, of the')).toEqual(['FOOD BANK OF THE ROCKIES', 'THE FOOD BANK', 'REGIONAL FOOD BANK OF OKLAHOMA']);
  });

  it('ranks an exact name above a prefix and a prefix above a fuzzy match', async () => {
    expect(await names('city harvest')).toEqual(['CITY HARVEST', 'CITY HARVEST INC', 'NEW YORK CITY HARVESTERS ASSOCIATION']);
  });

  it('takes the deprecated name parameter as the query when q is absent', async () => {
    expect((await searchDirectory(t.db, { name: 'city harvest inc' })).map((o) => o.name)[0]).toBe('CITY HARVEST INC');
  });

  it('returns at most limit results, 20 by default and at most', async () => {
    expect(DIRECTORY_SEARCH_LIMIT).toBe(20);
    expect(await names('public library friends')).toHaveLength(20);
    expect(await names('public library friends', 5)).toHaveLength(5);
    for (const limit of [0, 21, 2.5]) {
      await expect(searchDirectory(t.db, { q: 'public', limit })).rejects.toMatchObject({ code: 'invalid', message: /limit must be/ });
    }
  });

  it('finds nothing for a name nothing resembles', async () => {
    expect(await names('zyxwvut qqq')).toEqual([]);
  });

  it('refuses a search without a query, a query of no letters or digits, and a malformed ein', async () => {
    await expect(searchDirectory(t.db, {})).rejects.toMatchObject({ code: 'invalid', message: /q is required/ });
    await expect(searchDirectory(t.db, { q: '  ' })).rejects.toMatchObject({ code: 'invalid', message: /q is required/ });
    await expect(searchDirectory(t.db, { q: '%%_' })).rejects.toMatchObject({ code: 'invalid', message: /letter or a digit/ });
    await expect(searchDirectory(t.db, { q: 'x'.repeat(201) })).rejects.toMatchObject({ code: 'invalid', message: /at most 200/ });
    await expect(searchDirectory(t.db, { ein: '12-34' })).rejects.toMatchObject({ code: 'invalid', message: /9 digits/ });
    await expect(directoryOrganization(t.db, 'abc')).rejects.toMatchObject({ code: 'invalid' });
  });

  /** The plan of the search statement for `q`, as EXPLAIN (ANALYZE, FORMAT JSON) gives it. */
  async function planOf(q: string): Promise<PlanNode> {
    return t.db.transaction().execute(async (trx) => {
      await useSearchSettings(trx);
      // On a table this small, hashing the candidates against all of it is cheaper than looking
      // each up; on 1,000,000 names the planner looks each up unprompted (docs/directory.md).
      await sql`set local enable_hashjoin = off`.execute(trx);
      await sql`set local enable_mergejoin = off`.execute(trx);
      const { rows } = await sql<{
        'QUERY PLAN': [{ Plan: PlanNode }];
      }>`explain (analyze, format json) ${directoryNameSearch(q, 20)}`.execute(trx);
      return rows[0]!['QUERY PLAN'][0].Plan;
    });
  }

  it('reads at most its candidates, from index scans under LIMIT, however many names match', async () => {
    // 1,000 more names starting with "harbor arts": far more matches than candidates.
    await sql`insert into directory_organizations (ein, name, source)
      select (700000000 + i)::text, 'HARBOR ARTS GUILD ' || i, 'demo' from generate_series(1, 1000) as i`.execute(t.db);
    await sql`analyze directory_organizations`.execute(t.db);
    try {
      // A prefix query: the first candidates from the prefix index, in order; the words scan never runs.
      const prefix = await planOf('harbor arts');
      const prefixScan = nodes(prefix).find((n) => n['Index Name'] === 'directory_organizations_search_name_prefix_idx');
      expect(prefixScan).toMatchObject({ 'Node Type': 'Index Scan', 'Actual Rows': DIRECTORY_SEARCH_CANDIDATES });
      expect(limiterOf(prefix, prefixScan!)?.['Node Type']).toBe('Limit');
      const wordScans = nodes(prefix).filter((n) => n['Index Name'] === 'directory_organizations_search_words_idx');
      expect(wordScans.length).toBeGreaterThan(0);
      for (const scan of wordScans) expect(scan['Actual Loops']).toBe(0);

      // A typo: no name starts with it, so the words index gives at most the candidates, under a LIMIT.
      const typo = await planOf('harbro arts');
      const heapScans = nodes(typo).filter(
        (n) => n['Node Type'] === 'Bitmap Heap Scan' && n['Relation Name'] === 'directory_organizations',
      );
      expect(heapScans.length).toBeGreaterThan(0);
      for (const scan of heapScans) {
        expect(limiterOf(typo, scan)?.['Node Type']).toBe('Limit');
        expect(scan['Actual Rows']).toBeLessThanOrEqual(DIRECTORY_SEARCH_CANDIDATES);
      }
      expect(Math.max(...heapScans.map((n) => n['Actual Rows']))).toBe(DIRECTORY_SEARCH_CANDIDATES);
      // No node past the index's own bitmap hands on more than the candidates of the three scans.
      for (const plan of [prefix, typo]) {
        for (const node of nodes(plan).filter((n) => n['Node Type'] !== 'Bitmap Index Scan'))
          expect(node['Actual Rows'], node['Node Type']).toBeLessThanOrEqual(3 * DIRECTORY_SEARCH_CANDIDATES);
        expect(nodes(plan).some((n) => n['Node Type'] === 'Seq Scan')).toBe(false);
      }
      expect((await names('harbro arts')).every((name) => name.startsWith('HARBOR ARTS GUILD'))).toBe(true);
    } finally {
      await sql`delete from directory_organizations where ein between '700000001' and '700001000'`.execute(t.db);
    }
  });

  it("corrects each word against the directory's words: a swapped pair, a missing or wrong letter, the last word as a prefix", async () => {
    expect(await names('hravest')).toEqual(['CITY HARVEST', 'CITY HARVEST INC', 'NEW YORK CITY HARVESTERS ASSOCIATION']);
    // Names holding every word first; then, the candidates being few, names missing only the short ones.
    expect(await names('cty harvest in')).toEqual(['CITY HARVEST INC', 'CITY HARVEST']);
    const library = await names('libary friends 7');
    expect([library[0], library.length]).toEqual(['PUBLIC LIBRARY FRIENDS 7', 20]);
    expect((await names('pubxic library')).length).toBe(20);
    // Past 8 words, the first 7 and the last choose the candidates; all of them rank.
    expect((await names('regional food bank of oklahoma regional fod bank of oklahoma'))[0]).toBe('REGIONAL FOOD BANK OF OKLAHOMA');
    // The last word is compared with the words' starts: "cit" is two edits from "cty", one allowed at 3 letters.
    expect(await names('cty')).toEqual([]);
  });

  it('keeps the words table as names are added, renamed and removed', async () => {
    const count = async (word: string) =>
      (await t.db.selectFrom('directory_words').select('names').where('word', '=', word).executeTakeFirst())?.names ?? 0;
    expect(await count('harvest')).toBe(2);
    await t.db.insertInto('directory_organizations').values({ ein: '980000001', name: 'HARVEST TABLE, HARVEST', source: 'demo' }).execute();
    expect([await count('harvest'), await count('table')]).toEqual([3, 1]);
    await t.db.updateTable('directory_organizations').set({ name: 'GLEANERS TABLE' }).where('ein', '=', '980000001').execute();
    expect([await count('harvest'), await count('table'), await count('gleaners')]).toEqual([2, 1, 1]);
    expect(await names('gleanres')).toEqual(['GLEANERS TABLE']);
    await t.db.deleteFrom('directory_organizations').where('ein', '=', '980000001').execute();
    expect([await count('table'), await count('gleaners')]).toEqual([0, 0]);
    expect(await t.db.selectFrom('directory_words').select('word').where('word', 'in', ['table', 'gleaners']).execute()).toEqual([]);
  });

  it('puts a query in the normal form of the stored names, whatever the characters', async () => {
    // Any text PostgreSQL stores (no NUL) that is not blank: the generated column and searchName agree.
    const name = fc
      .oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }))
      .map((text) => text.replace(/\0/g, ''))
      .filter((text) => text.replace(/^ +| +$/g, '') !== '');
    const FIRST_EIN = 990_000_000;
    await fc.assert(
      fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 40 }), async (texts) => {
        const rows = texts.map((text, i) => ({ ein: String(FIRST_EIN + i), name: text, source: 'demo' as const }));
        await t.db.insertInto('directory_organizations').values(rows).execute();
        const stored = await t.db
          .selectFrom('directory_organizations')
          .select('search_name')
          .where('ein', '>=', String(FIRST_EIN))
          .orderBy('ein')
          .execute();
        await t.db.deleteFrom('directory_organizations').where('ein', '>=', String(FIRST_EIN)).execute();
        expect(stored.map((r) => r.search_name)).toEqual(texts.map(searchName));
      }),
      { numRuns: 25 },
    );
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

function parentOf(plan: PlanNode, child: PlanNode): PlanNode | undefined {
  return nodes(plan).find((n) => n.Plans?.includes(child));
}

/** The node a scan hands its rows to, past the Result that holds a one-time filter. */
function limiterOf(plan: PlanNode, scan: PlanNode): PlanNode | undefined {
  const parent = parentOf(plan, scan);
  return parent?.['Node Type'] === 'Result' ? parentOf(plan, parent) : parent;
}
