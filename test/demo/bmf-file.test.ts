import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoBmfFile } from '../../src/demo/bmf-file.js';
import { BMF_COLUMNS } from '../../src/directory/bmf-layout.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { searchDirectory } from '../../src/directory/search-service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/temp-dirs.js';

/**
 * The demo IRS EO BMF file (docs/directory.md, "A demo directory"): the published layout, as
 * many organizations as asked, the same file for the same seed, and names the typeahead finds.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe('the demo BMF file', () => {
  it('has the published header and N records with distinct 9-digit EINs from the first one, and imports whole', async () => {
    const file = path.join(tempDir(), 'eo.csv');
    expect(await writeDemoBmfFile(file, { rows: 2000, firstEin: 100_000_000 })).toBe(2000);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(BMF_COLUMNS.join(','));
    expect(lines).toHaveLength(2001);
    const eins = lines.slice(1).map((l) => l.split(',')[0]!);
    expect(eins[0]).toBe('100000000');
    expect(eins[1999]).toBe('100001999');
    expect(new Set(eins).size).toBe(2000);
    expect(await importBmfFile(t.db, file)).toEqual({ read: 2000, inserted: 2000, updated: 0, unchanged: 0 });
  });

  it('is the same file for the same seed and another for another seed', async () => {
    const dir = tempDir();
    const write = async (name: string, seed: number) => {
      await writeDemoBmfFile(path.join(dir, name), { rows: 300, seed });
      return fs.readFileSync(path.join(dir, name), 'utf8');
    };
    const a = await write('a.csv', 7);
    expect(await write('b.csv', 7)).toBe(a);
    expect(await write('c.csv', 8)).not.toBe(a);
  });

  it('has names the typeahead finds: a prefix, a whole name and a transposed pair ("food bnak")', async () => {
    // The 2,000 organizations imported by the first test.
    const prefix = await searchDirectory(t.db, { q: 'food ba' });
    expect(prefix.length).toBeGreaterThan(0);
    expect(prefix[0]!.name.startsWith('FOOD BA')).toBe(true);
    const typo = await searchDirectory(t.db, { q: 'food bnak' });
    expect(typo.some((o) => o.name.includes('FOOD BANK'))).toBe(true);
  });
});

describe('admin demo bmf', () => {
  it('writes the file where --out says, relative to where it was run, and prints what it wrote as JSON', async () => {
    const dir = tempDir();
    const r = await runAdmin(['demo', 'bmf', '--out', 'eo-demo.csv', '--rows', '50', '--json'], { DATABASE_URL: t.url }, '', dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ file: path.join(dir, 'eo-demo.csv'), rows: 50, seed: 1, first_ein: 100_000_000 });
    expect(fs.readFileSync(path.join(dir, 'eo-demo.csv'), 'utf8').trimEnd().split('\n')).toHaveLength(51);
  });

  it('exits 2 with the usage line for EINs past 9 digits, and writes nothing', async () => {
    const dir = tempDir();
    const r = await runAdmin(
      ['demo', 'bmf', '--out', 'x.csv', '--rows', '10', '--first-ein', '999999995'],
      { DATABASE_URL: t.url },
      '',
      dir,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--first-ein plus --rows must stay within 9 digits');
    expect(fs.existsSync(path.join(dir, 'x.csv'))).toBe(false);
  });
});
