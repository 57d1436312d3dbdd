/** Dates as the dashboard shows them: medium date and time in UTC, with the ISO value for <time>. */
const DATE = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

export interface ShownDate {
  iso: string;
  text: string;
}

export function shownDate(date: Date): ShownDate;
export function shownDate(date: Date | null): ShownDate | undefined;
export function shownDate(date: Date | null): ShownDate | undefined {
  return date ? { iso: date.toISOString(), text: `${DATE.format(date)} UTC` } : undefined;
}
