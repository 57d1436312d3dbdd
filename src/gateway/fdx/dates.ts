import { invalidDateRange } from './problems.js';

/**
 * FDX date filters (docs/api.md, "FDX bank-data API", Dates): `startTime` and `endTime` are
 * YYYY-MM-DD, inclusive, given both or neither; neither means the last 7 days; a start older than
 * 24 months is clamped to that boundary. One without the other, a start after the end, or a
 * malformed date is 703. Dates are UTC days.
 */
export interface DateRange {
  startDate: string;
  endDate: string;
  /** Start of startDate, inclusive. */
  from: Date;
  /** Start of the day after endDate, exclusive. Not after `from` when the clamp leaves nothing. */
  until: Date;
}

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 7;
export const HISTORY_MONTHS = 24;

export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

/** YYYY-MM-DD naming a real calendar day, or undefined. */
export function parseDate(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return isoDate(date) === value ? date : undefined;
}

/** The same day 24 months before `today` (the last day of that month when it is shorter). */
export function historyBoundary(today: Date, months = HISTORY_MONTHS): Date {
  const year = today.getUTCFullYear();
  const month = today.getUTCMonth() - months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(today.getUTCDate(), lastDay)));
}

function parseOne(name: string, value: string): Date {
  const date = parseDate(value);
  if (!date) throw invalidDateRange(`${name} must be a calendar date as YYYY-MM-DD, not "${value.slice(0, 40)}".`);
  return date;
}

export function resolveDateRange(startTime: string | undefined, endTime: string | undefined, now: Date = new Date()): DateRange {
  const today = utcDay(now);
  let start: Date;
  let end: Date;
  if (startTime === undefined && endTime === undefined) {
    start = new Date(today.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
    end = today;
  } else if (startTime === undefined || endTime === undefined) {
    throw invalidDateRange('startTime and endTime must be given together, or neither (the last 7 days).');
  } else {
    start = parseOne('startTime', startTime);
    end = parseOne('endTime', endTime);
    if (start > end) throw invalidDateRange(`startTime ${startTime} is after endTime ${endTime}.`);
  }
  // Data is available for 24 months: an older start is clamped rather than refused.
  const boundary = historyBoundary(today);
  if (start < boundary) start = boundary;
  return { startDate: isoDate(start), endDate: isoDate(end), from: start, until: new Date(end.getTime() + DAY_MS) };
}
