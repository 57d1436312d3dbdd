import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBmfFile } from '../../src/directory/import-service.js';
import { BMF_HEADER, bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const rows = () => t.db.selectFrom('directory_organizations').selectAll().orderBy('ein').execute();
const count = async () => (await rows()).length;

const FIRST = [
  bmfLine({ EIN: '840772672', NAME: 'FOOD BANK OF THE ROCKIES', NTEE_CD: 'K31' }),
  bmfLine({ EIN: '530196605', NAME: 'AMERICAN NATIONAL RED CROSS', CITY: 'WASHINGTON', STATE: 'DC', ICO: '% GENERAL COUNSEL' }),
  bmfLine({ EIN: '010000001', NAME: 'FRIENDS OF THE LIBRARY, INC.', STREET: 'PO BOX 12, SUITE "B"', RULING: '' }),
];

describe('importing an IRS EO BMF file', () => {
  it('imports every record with the fields the published Organization shows, then a re-run changes nothing', async () => {
    const file = writeBmfFile(FIRST);
    expect(await importBmfFile(t.db, file)).toEqual({ read: 3, inserted: 3, updated: 0, unchanged: 0 });
    const red = (await rows()).find((r) => r.ein === '530196605')!;
    expect(red).toMatchObject({
      name: 'AMERICAN NATIONAL RED CROSS',
      search_name: 'american national red cross',
      in_care_of: '% GENERAL COUNSEL',
      city: 'WASHINGTON',
      state: 'DC',
      postal_code: '80202-1234',
      subsection_code: '03',
      foundation_code: '15',
      ruling: '198501',
      ntee_code: 'K31',
      source: 'irs_bmf',
    });
    // Quoted fields keep their commas and quotes; an empty field is null.
    const friends = (await rows()).find((r) => r.ein === '010000001')!;
    expect(friends).toMatchObject({ name: 'FRIENDS OF THE LIBRARY, INC.', street: 'PO BOX 12, SUITE "B"', ruling: null, sort_name: null });
    const before = (await rows()).map((r) => r.updated_at.getTime());
    expect(await importBmfFile(t.db, file)).toEqual({ read: 3, inserted: 0, updated: 0, unchanged: 3 });
    expect((await rows()).map((r) => r.updated_at.getTime())).toEqual(before);
  });

  it('updates a changed record only, and inserts a new one', async () => {
    const file = writeBmfFile([
      FIRST[0]!,
      bmfLine({ EIN: '530196605', NAME: 'AMERICAN NATIONAL RED CROSS', CITY: 'ARLINGTON', STATE: 'VA', ICO: '% GENERAL COUNSEL' }),
      FIRST[2]!,
      bmfLine({ EIN: '200000002', NAME: 'CITY HARVEST INC', STATE: 'NY' }),
    ]);
    expect(await importBmfFile(t.db, file)).toEqual({ read: 4, inserted: 1, updated: 1, unchanged: 2 });
    expect((await rows()).find((r) => r.ein === '530196605')).toMatchObject({ city: 'ARLINGTON', state: 'VA' });
  });

  it('imports more records than one batch holds, with a record whose quoted field spans lines', async () => {
    const lines = Array.from({ length: 2_345 }, (_, i) => bmfLine({ EIN: String(300_000_000 + i), NAME: `BATCH ORG ${i}` }));
    lines.push(bmfLine({ EIN: '399999999', NAME: 'TWO LINE\nNAME TRUST' }));
    const before = await count();
    expect(await importBmfFile(t.db, writeBmfFile(lines))).toEqual({ read: 2_346, inserted: 2_346, updated: 0, unchanged: 0 });
    expect(await count()).toBe(before + 2_346);
  });

  describe('a malformed file is refused whole, naming the line and the reason', () => {
    const refusals: [string, string[], string | undefined, RegExp][] = [
      [
        'a header not in the IRS layout',
        [FIRST[0]!],
        'EIN,NAME,CITY',
        /^.*eo\.csv: line 1: the header is not the IRS EO BMF layout \(missing ICO, STREET/,
      ],
      ['an unknown column', [FIRST[0]!], `${BMF_HEADER},EXTRA`, /line 1: .*unknown "EXTRA"/],
      [
        'a bad EIN on line 4',
        [bmfLine({ EIN: '700000001', NAME: 'A' }), bmfLine({ EIN: '700000002', NAME: 'B' }), bmfLine({ EIN: '12-345', NAME: 'C' })],
        undefined,
        /line 4: EIN "12-345" is not 9 digits; nothing was imported$/,
      ],
      [
        'a missing name on line 3',
        [bmfLine({ EIN: '700000001', NAME: 'A' }), bmfLine({ EIN: '700000002', NAME: ' ' })],
        undefined,
        /line 3: NAME is empty \(EIN 700000002\)/,
      ],
      [
        'a short record',
        [bmfLine({ EIN: '700000001', NAME: 'A' }), '700000002,B,C'],
        undefined,
        /line 3: 3 fields where the header has 28/,
      ],
      [
        'an EIN twice',
        [
          bmfLine({ EIN: '700000001', NAME: 'A' }),
          bmfLine({ EIN: '700000002', NAME: 'B' }),
          bmfLine({ EIN: '700000001', NAME: 'A AGAIN' }),
        ],
        undefined,
        /line 4: EIN 700000001 is also on line 2/,
      ],
      [
        'an unclosed quote',
        [bmfLine({ EIN: '700000001', NAME: 'A' }), '700000002,"B'],
        undefined,
        /: line \d+: not CSV \(Quote Not Closed/,
      ],
    ];
    for (const [what, lines, header, reason] of refusals) {
      it(what, async () => {
        const before = await rows();
        const file = writeBmfFile(lines, header ? { header } : {});
        const error = await importBmfFile(t.db, file).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ code: 'unprocessable', message: expect.stringMatching(reason) });
        expect(await rows()).toEqual(before);
      });
    }

    it('a bad line after a full batch was written rolls the batch back', async () => {
      const before = await count();
      const lines = Array.from({ length: 1_500 }, (_, i) => bmfLine({ EIN: String(800_000_000 + i), NAME: `LATE ${i}` }));
      lines.push(bmfLine({ EIN: 'ABCDEFGHI', NAME: 'BAD' }));
      await expect(importBmfFile(t.db, writeBmfFile(lines))).rejects.toMatchObject({
        message: expect.stringMatching(/line 1502: EIN "ABCDEFGHI"/),
      });
      expect(await count()).toBe(before);
    });

    it('an empty file', async () => {
      const file = path.join(tempDir(), 'empty.csv');
      fs.writeFileSync(file, '');
      await expect(importBmfFile(t.db, file)).rejects.toMatchObject({
        code: 'unprocessable',
        message: expect.stringMatching(/the file is empty/),
      });
    });
  });

  it('the admin command reads the file from the directory it was run from, and says when nothing changed', async () => {
    const dir = tempDir();
    writeBmfFile([bmfLine({ EIN: '900000009', NAME: 'RELATIVE PATH FOUNDATION' })], { dir, name: 'eo_co.csv' });
    const first = await runAdmin(['organizations', 'import', 'eo_co.csv', '--json'], { DATABASE_URL: t.url }, '', dir);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ file: path.join(dir, 'eo_co.csv'), read: 1, inserted: 1, updated: 0, unchanged: 0 });
    const again = await runAdmin(['organizations', 'import', 'eo_co.csv'], { DATABASE_URL: t.url }, '', dir);
    expect(again.stdout).toBe(`${path.join(dir, 'eo_co.csv')}: read 1, inserted 0, updated 0, unchanged 1 (nothing changed)\n`);
  });
});
