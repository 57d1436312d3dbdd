import fs from 'node:fs';
import path from 'node:path';
import { BMF_COLUMNS, type BmfColumn } from '../../src/directory/bmf-layout.js';
import { tempDir } from './temp-dirs.js';

/** IRS EO BMF CSV files for the directory's tests, in the published layout. */

export const BMF_HEADER = BMF_COLUMNS.join(',');

function quoted(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One record: typical values for a public charity, overridden by `fields`. */
export function bmfLine(fields: Partial<Record<BmfColumn, string>> & { EIN: string; NAME: string }): string {
  const defaults: Partial<Record<BmfColumn, string>> = {
    STREET: '100 MAIN ST',
    CITY: 'DENVER',
    STATE: 'CO',
    ZIP: '80202-1234',
    GROUP: '0000',
    SUBSECTION: '03',
    AFFILIATION: '3',
    CLASSIFICATION: '1000',
    RULING: '198501',
    DEDUCTIBILITY: '1',
    FOUNDATION: '15',
    ACTIVITY: '000000000',
    ORGANIZATION: '1',
    STATUS: '01',
    TAX_PERIOD: '202312',
    ASSET_CD: '5',
    INCOME_CD: '5',
    FILING_REQ_CD: '01',
    PF_FILING_REQ_CD: '0',
    ACCT_PD: '12',
    ASSET_AMT: '1500000',
    INCOME_AMT: '700000',
    REVENUE_AMT: '650000',
    NTEE_CD: 'K31',
  };
  const all = { ...defaults, ...fields };
  return BMF_COLUMNS.map((column) => quoted(all[column] ?? '')).join(',');
}

/** Writes a file of the header and `lines` into a new temporary directory; returns its path. */
export function writeBmfFile(lines: readonly string[], { header = BMF_HEADER, name = 'eo.csv', dir = tempDir() } = {}): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${[header, ...lines].join('\n')}\n`);
  return file;
}
