import fs from 'node:fs';
import { once } from 'node:events';
import { BMF_COLUMNS, type BmfColumn } from '../directory/bmf-layout.js';

/**
 * A demo IRS EO BMF CSV file in the published layout (docs/directory.md, "Demo directory"): N
 * organizations whose names combine word lists the way real charities' names do ("Riverside Food
 * Bank", "Friends of the Maple Valley Library"), so typeahead queries ("food ba", "food bnak",
 * "hilltop") find many. Deterministic for a seed; streamed to disk, never held whole.
 */

const PLACES = [
  'Riverside',
  'Hilltop',
  'Maple Valley',
  'Cedar Creek',
  'Lakeside',
  'Pine Ridge',
  'Oak Grove',
  'Springfield',
  'Fairview',
  'Greenwood',
  'Harbor',
  'Summit',
  'Willow Brook',
  'Eastside',
  'Westfield',
  'Northgate',
  'Southport',
  'Clearwater',
  'Stone Bridge',
  'Silver Lake',
  'Brookside',
  'Meadowbrook',
  'Highland',
  'Sunset',
  'Prairie',
  'Mountain View',
  'Bayview',
  'Elm Street',
  'Franklin',
  'Lincoln',
  'Jefferson',
  'Madison',
  'Washington',
  'Columbia',
  'Grand River',
  'Red Rock',
  'Blue Ridge',
  'Golden Valley',
  'Iron Hill',
  'Canyon',
  'Coastal',
  'Heartland',
  'Twin Rivers',
  'Three Oaks',
  'Bear Creek',
  'Fox Hollow',
  'Eagle Point',
  'Deer Park',
];
/** Place names as towns are named, a first part and a second ("Ashford", "Greenville"): 600 of them beside PLACES. */
const PLACE_STARTS = [
  'Ash',
  'Beech',
  'Birch',
  'Brook',
  'Clay',
  'Cliff',
  'Crest',
  'Dale',
  'East',
  'Elm',
  'Fair',
  'Glen',
  'Green',
  'Hazel',
  'Holly',
  'Lake',
  'Lin',
  'Marsh',
  'Mill',
  'North',
  'Oak',
  'Rock',
  'Rose',
  'Sand',
  'Shel',
  'South',
  'Spring',
  'Stan',
  'West',
  'Wood',
];
const PLACE_ENDS = [
  'ford',
  'ville',
  'field',
  'wood',
  'dale',
  'ton',
  'bury',
  'port',
  'view',
  'haven',
  'mont',
  'land',
  'ridge',
  'stead',
  'worth',
  'brook',
  'crest',
  'gate',
  'ley',
  'more',
];
const TOWNS = PLACE_STARTS.flatMap((start) => PLACE_ENDS.map((end) => `${start}${end}`));

const CAUSES = [
  'Food',
  'Community',
  'Youth',
  'Senior',
  'Animal',
  'Family',
  "Children's",
  'Veterans',
  'Arts',
  'Music',
  'Literacy',
  'Health',
  'Housing',
  'Education',
  'Environmental',
  'Wildlife',
  'Historical',
  'Refugee',
  "Women's",
  'Mental Health',
  'Disability',
  'Hospice',
  'Science',
  'Sports',
  'Garden',
  'Theater',
];
const KINDS = [
  'Bank',
  'Pantry',
  'Center',
  'Foundation',
  'Alliance',
  'Association',
  'Coalition',
  'Society',
  'Fund',
  'Network',
  'Project',
  'Services',
  'Shelter',
  'League',
  'Council',
  'Trust',
  'Library',
  'Museum',
  'Club',
  'Clinic',
  'Outreach',
  'Initiative',
  'Partnership',
  'Collective',
];
const CITIES: readonly (readonly [string, string, string])[] = [
  ['DENVER', 'CO', '80202'],
  ['AUSTIN', 'TX', '78701'],
  ['PORTLAND', 'OR', '97201'],
  ['BOSTON', 'MA', '02108'],
  ['CHICAGO', 'IL', '60601'],
  ['ATLANTA', 'GA', '30303'],
  ['SEATTLE', 'WA', '98101'],
  ['PHOENIX', 'AZ', '85001'],
  ['MADISON', 'WI', '53703'],
  ['RALEIGH', 'NC', '27601'],
  ['BOISE', 'ID', '83702'],
  ['OMAHA', 'NE', '68102'],
  ['RICHMOND', 'VA', '23219'],
  ['TUCSON', 'AZ', '85701'],
  ['BUFFALO', 'NY', '14202'],
  ['SPOKANE', 'WA', '99201'],
];
const STREETS = ['MAIN ST', 'OAK AVE', 'PINE ST', 'MARKET ST', 'CHURCH RD', 'MILL RD', 'PARK AVE', 'HIGH ST'];
const NTEE = ['K31', 'P20', 'B90', 'A20', 'D20', 'E20', 'L41', 'O50', 'C30', 'X20', 'N60', 'S20'];

/** A small seeded generator (mulberry32): the same seed writes the same file. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function quoted(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The EIN of the file's i-th organization: 9 digits counted from `first`. */
export function demoEin(first: number, i: number): string {
  return String(first + i).padStart(9, '0');
}

/** One organization's name: a place, a cause and a kind, in one of the shapes real names take. */
function demoName(next: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  // One name in four uses a well-known place (many share it, as "Springfield" does); the rest a town's.
  const place = next() < 0.25 ? pick(PLACES) : pick(TOWNS);
  const cause = pick(CAUSES);
  const kind = pick(KINDS);
  const shape = next();
  const name =
    shape < 0.55
      ? `${place} ${cause} ${kind}`
      : shape < 0.75
        ? `${cause} ${kind} of ${place}`
        : shape < 0.9
          ? `Friends of the ${place} ${kind}`
          : `${place} ${cause} ${kind} Inc`;
  return name.toUpperCase();
}

export interface DemoBmfOptions {
  rows: number;
  /** The same seed writes the same names (default 1). */
  seed?: number;
  /** The first EIN, as a number (default 100000000: 10-0000000). */
  firstEin?: number;
}

/** Writes the header and `rows` records to `file`; resolves with the number written. */
export async function writeDemoBmfFile(file: string, options: DemoBmfOptions): Promise<number> {
  const firstEin = options.firstEin ?? 100_000_000;
  if (!Number.isSafeInteger(options.rows) || options.rows < 0) throw new RangeError('rows must be a whole number, 0 or more');
  if (firstEin + options.rows > 1_000_000_000) throw new RangeError('the EINs would pass 9 digits');
  const next = random(options.seed ?? 1);
  const out = fs.createWriteStream(file);
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  const write = async (text: string) => {
    if (!out.write(text)) await Promise.race([once(out, 'drain'), failed]);
  };
  await write(`${BMF_COLUMNS.join(',')}\n`);
  let chunk = '';
  for (let i = 0; i < options.rows; i += 1) {
    const [city, state, zip] = CITIES[Math.floor(next() * CITIES.length)]!;
    const record: Partial<Record<BmfColumn, string>> = {
      EIN: demoEin(firstEin, i),
      NAME: demoName(next),
      STREET: `${1 + Math.floor(next() * 9000)} ${STREETS[Math.floor(next() * STREETS.length)]!}`,
      CITY: city,
      STATE: state,
      ZIP: `${zip}-${String(Math.floor(next() * 10_000)).padStart(4, '0')}`,
      GROUP: '0000',
      SUBSECTION: '03',
      AFFILIATION: '3',
      CLASSIFICATION: '1000',
      RULING: `${1950 + Math.floor(next() * 74)}${String(1 + Math.floor(next() * 12)).padStart(2, '0')}`,
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
      ASSET_AMT: String(Math.floor(next() * 5_000_000)),
      INCOME_AMT: String(Math.floor(next() * 2_000_000)),
      REVENUE_AMT: String(Math.floor(next() * 2_000_000)),
      NTEE_CD: NTEE[Math.floor(next() * NTEE.length)]!,
    };
    chunk += `${BMF_COLUMNS.map((column) => quoted(record[column] ?? '')).join(',')}\n`;
    if (chunk.length > 65_536) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await Promise.race([new Promise<void>((resolve) => out.end(resolve)), failed]);
  return options.rows;
}
