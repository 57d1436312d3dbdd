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

const DAY = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' });

/** A day, where the time would only be noise (a member since …). */
export function shownDay(date: Date): ShownDate {
  return { iso: date.toISOString(), text: DAY.format(date) };
}
