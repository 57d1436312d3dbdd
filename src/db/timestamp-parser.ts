import pg from 'pg';

/**
 * timestamptz values arrive as text; pg's parser (postgres-date) runs three regular
 * expressions and builds a dozen substrings per value, which a 100-row page pays 200 times.
 * The common shape under a UTC session, `2025-06-12 01:45:07.441+00`, is read here from the
 * character codes, with exactly postgres-date's arithmetic (milliseconds are
 * `1000 * 0.<digits>`, truncated by Date.UTC); every other shape (other offsets, BC,
 * years before 1000, infinity) goes to postgres-date itself.
 */
const TIMESTAMPTZ_OID = 1184;
const fallback = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => unknown;

const ZERO = 48;

function digits(value: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i += 1) {
    const d = value.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

export function parseTimestamptz(value: string): unknown {
  const length = value.length;
  // YYYY-MM-DD HH:MM:SS+00 is 22 characters; a fraction adds 2 to 7.
  if (
    length < 22 ||
    length > 29 ||
    value.charCodeAt(length - 3) !== 43 /* + */ ||
    value.charCodeAt(length - 2) !== ZERO ||
    value.charCodeAt(length - 1) !== ZERO
  )
    return fallback(value);
  if (
    value.charCodeAt(4) !== 45 ||
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 32 ||
    value.charCodeAt(13) !== 58 ||
    value.charCodeAt(16) !== 58
  )
    return fallback(value);
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return fallback(value);
  let ms = 0;
  const fractionDigits = length - 3 - 20;
  if (length > 22) {
    if (value.charCodeAt(19) !== 46 /* . */ || fractionDigits < 1) return fallback(value);
    const fraction = digits(value, 20, fractionDigits);
    if (fraction < 0) return fallback(value);
    // postgres-date: 1000 * parseFloat('.<digits>'); the quotient is the same double.
    ms = 1000 * (fraction / 10 ** fractionDigits);
  }
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
}

/** The pool's type parsers: pg's, with the fast timestamptz reader. */
export const almonerTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};
