import fs from 'node:fs';
import path from 'node:path';
import { BMF_COLUMNS, bmfRecordLine, PUBLIC_CHARITY_CODES, type BmfColumn } from '../../src/directory/bmf-layout.js';
import { tempDir } from './temp-dirs.js';

/** IRS EO BMF CSV files for the directory's tests, in the published layout. */

export const BMF_HEADER = BMF_COLUMNS.join(',');

/** One record: typical values for a public charity, overridden by `fields`. */
export function bmfLine(fields: Partial<Record<BmfColumn, string>> & { EIN: string; NAME: string }): string {
  const defaults: Partial<Record<BmfColumn, string>> = {
    ...PUBLIC_CHARITY_CODES,
    STREET: '100 MAIN ST',
    CITY: 'DENVER',
    STATE: 'CO',
    ZIP: '80202-1234',
    RULING: '198501',
    ASSET_AMT: '1500000',
    INCOME_AMT: '700000',
    REVENUE_AMT: '650000',
    NTEE_CD: 'K31',
  };
  const all = { ...defaults, ...fields };
  return bmfRecordLine(all);
}

/** Writes a file of the header and `lines` into a new temporary directory; returns its path. */
export function writeBmfFile(lines: readonly string[], { header = BMF_HEADER, name = 'eo.csv', dir = tempDir() } = {}): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${[header, ...lines].join('\n')}\n`);
  return file;
}
