import type { DirectoryOrganizationsTable } from '../db/schema-directory.js';

/**
 * The IRS's published layout of the Exempt Organizations Business Master File extract (the
 * eo1.csv … eo4.csv and per-state files; docs/directory.md, "Where the data comes from"): its
 * header row, and how one record becomes a directory row. Pure: the import streams the file.
 */

export const BMF_COLUMNS = [
  'EIN',
  'NAME',
  'ICO',
  'STREET',
  'CITY',
  'STATE',
  'ZIP',
  'GROUP',
  'SUBSECTION',
  'AFFILIATION',
  'CLASSIFICATION',
  'RULING',
  'DEDUCTIBILITY',
  'FOUNDATION',
  'ACTIVITY',
  'ORGANIZATION',
  'STATUS',
  'TAX_PERIOD',
  'ASSET_CD',
  'INCOME_CD',
  'FILING_REQ_CD',
  'PF_FILING_REQ_CD',
  'ACCT_PD',
  'ASSET_AMT',
  'INCOME_AMT',
  'REVENUE_AMT',
  'NTEE_CD',
  'SORT_NAME',
] as const;

export type BmfColumn = (typeof BMF_COLUMNS)[number];

/**
 * The codes the file gives a typical public charity (a 501(c)(3) exempt unconditionally, gifts
 * deductible, filing a Form 990), for the files the demo and the tests write.
 */
export const PUBLIC_CHARITY_CODES: Readonly<Partial<Record<BmfColumn, string>>> = {
  GROUP: '0000',
  SUBSECTION: '03',
  AFFILIATION: '3',
  CLASSIFICATION: '1000',
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
};

/** One record as a line of the file: its fields in the header's order, quoted where CSV needs it. */
export function bmfRecordLine(record: Partial<Record<BmfColumn, string>>): string {
  return BMF_COLUMNS.map((column) => {
    const value = record[column] ?? '';
    return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
  }).join(',');
}

/** What the import writes of a record: the table's columns less the generated and bookkeeping ones. */
export type DirectoryRecord = Omit<
  DirectoryOrganizationsTable,
  'id' | 'search_name' | 'search_words' | 'source' | 'created_at' | 'updated_at'
>;

/** Thrown for a header or record the layout refuses; the import adds the line number. */
export class BmfLayoutError extends Error {
  override name = 'BmfLayoutError';
}

/** Where each column is in this file's header; a missing, unknown or repeated column refuses the file. */
export function headerPositions(header: readonly string[]): Record<BmfColumn, number> {
  const names = header.map((name) => name.trim().toUpperCase());
  const known = new Set<string>(BMF_COLUMNS);
  const missing = BMF_COLUMNS.filter((column) => !names.includes(column));
  const unknown = names.filter((name) => !known.has(name));
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  const problems = [
    missing.length ? `missing ${missing.join(', ')}` : '',
    unknown.length ? `unknown ${unknown.map((n) => JSON.stringify(n)).join(', ')}` : '',
    repeated.length ? `repeated ${[...new Set(repeated)].join(', ')}` : '',
  ].filter(Boolean);
  if (problems.length)
    throw new BmfLayoutError(`the header is not the IRS EO BMF layout (${problems.join('; ')}); expected ${BMF_COLUMNS.join(',')}`);
  return Object.fromEntries(BMF_COLUMNS.map((column) => [column, names.indexOf(column)])) as Record<BmfColumn, number>;
}

/** The file pads codes and leaves fields empty: trimmed, and empty is null. */
function text(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** One record of the file as a directory row; a record the layout refuses throws BmfLayoutError. */
export function bmfRecord(fields: readonly string[], at: Record<BmfColumn, number>, width: number): DirectoryRecord {
  if (fields.length !== width) throw new BmfLayoutError(`${fields.length} fields where the header has ${width}`);
  const field = (column: BmfColumn) => text(fields[at[column]]);
  const ein = field('EIN');
  if (ein === null) throw new BmfLayoutError('EIN is empty');
  if (!/^\d{9}$/.test(ein)) throw new BmfLayoutError(`EIN ${JSON.stringify(ein)} is not 9 digits`);
  const name = field('NAME');
  if (name === null) throw new BmfLayoutError(`NAME is empty (EIN ${ein})`);
  const ruling = field('RULING');
  if (ruling !== null && !/^\d{6}$/.test(ruling)) throw new BmfLayoutError(`RULING ${JSON.stringify(ruling)} is not YYYYMM (EIN ${ein})`);
  return {
    ein,
    name,
    sort_name: field('SORT_NAME'),
    in_care_of: field('ICO'),
    street: field('STREET'),
    city: field('CITY'),
    state: field('STATE'),
    postal_code: field('ZIP'),
    group_exemption_number: field('GROUP'),
    subsection_code: field('SUBSECTION'),
    affiliation_code: field('AFFILIATION'),
    classification_code: field('CLASSIFICATION'),
    ruling,
    deductibility_code: field('DEDUCTIBILITY'),
    foundation_code: field('FOUNDATION'),
    organization_code: field('ORGANIZATION'),
    exempt_status_code: field('STATUS'),
    filing_requirement_code: field('FILING_REQ_CD'),
    ntee_code: field('NTEE_CD'),
  };
}
