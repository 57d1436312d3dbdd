import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../helpers/admin-cli.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const admin = (argv: string[], cwd?: string) => runAdmin(argv, { DATABASE_URL: t.url }, '', cwd);

describe('organizations import', () => {
  it('exits 0 and prints the counts, as one JSON object with --json', async () => {
    const file = writeBmfFile([
      bmfLine({ EIN: '840772672', NAME: 'FOOD BANK OF THE ROCKIES' }),
      bmfLine({ EIN: '131635294', NAME: 'CITY HARVEST' }),
    ]);
    const text = await admin(['organizations', 'import', file]);
    expect(text).toEqual({ code: 0, stdout: `${file}: read 2, inserted 2, updated 0, unchanged 0\n`, stderr: '' });
    const json = await admin(['organizations', 'import', file, '--json']);
    expect(json.code).toBe(0);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stdout)).toEqual({ file, read: 2, inserted: 0, updated: 0, unchanged: 2 });
  });

  it('exits 1 with one error line naming the line and the reason for a malformed file, and writes nothing', async () => {
    const before = await t.db.selectFrom('directory_organizations').select('ein').execute();
    const file = writeBmfFile([bmfLine({ EIN: '700000001', NAME: 'NEW ONE' }), bmfLine({ EIN: '7000000', NAME: 'SHORT EIN' })]);
    const r = await admin(['organizations', 'import', file, '--json']);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `almoner admin: error (unprocessable): ${file}: line 3: EIN "7000000" is not 9 digits; nothing was imported\n`,
    });
    expect(await t.db.selectFrom('directory_organizations').select('ein').execute()).toEqual(before);
  });

  it('exits 1 for a file that is not there, naming where it looked', async () => {
    const dir = tempDir();
    const r = await admin(['organizations', 'import', 'missing.csv'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`almoner admin: error (not_found): cannot read ${path.join(dir, 'missing.csv')} (ENOENT)\n`);
  });

  it('exits 2 with the usage line when the file is not named', async () => {
    const r = await admin(['organizations', 'import']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('almoner admin: <file.csv> is required; usage: npm run admin -- organizations import <file.csv>\n');
  });
});
