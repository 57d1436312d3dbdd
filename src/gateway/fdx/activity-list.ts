import { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { Caller } from '../routing/caller.js';
import type { Window } from './activity-repository.js';
import { checkPageKey, requireAccount } from './access.js';
import { lookbackStart } from './consent-scope.js';
import { resolveDateRange } from './dates.js';
import { fdxPage, limitParam, pageKeyParam, type FdxPage } from './paging.js';

/** Checked by resolveDateRange, so that every bad date is FDX code 703 rather than a generic 400. */
export const DateParams = {
  startTime: z.string().optional().describe('YYYY-MM-DD, inclusive; with endTime or neither (the last 7 days)'),
  endTime: z.string().optional().describe('YYYY-MM-DD, inclusive; with startTime or neither'),
};

/** The query of every dated list under an account (transactions, statements). */
export const ActivityQuery = z.object({ limit: limitParam, pageKey: pageKeyParam, ...DateParams });

/** Where one kind of account activity is read from: its repository's three list queries. */
export interface ActivitySource<T extends { id: string }> {
  belongsTo(db: Db, accountId: string, id: string): Promise<boolean>;
  list(db: Db, accountId: string, window: Window, startId: string | undefined, limit: number): Promise<T[]>;
  count(db: Db, accountId: string, window: Window): Promise<number>;
}

/**
 * A consent's lookback clips the window (docs/api.md, "FDX bank-data API", Consents): nothing
 * older than lookbackPeriod days before now is listed, and an earlier startTime is clipped to
 * that instant rather than refused. Statements are dated by day, so theirs starts that day.
 */
export function withinLookback(caller: Caller, window: Window, now = new Date()): Window {
  const start = lookbackStart(caller, now);
  return start && start > window.from ? { from: start, until: window.until } : window;
}

/**
 * One page of an account's dated activity: the account must be the caller's (701), the dates
 * valid (703), the pageKey a row of this list (400); the page counts every row in the window.
 */
export async function listAccountActivity<T extends { id: string }>(
  db: Db,
  caller: Caller,
  accountId: string,
  query: z.infer<typeof ActivityQuery>,
  source: ActivitySource<T>,
): Promise<{ items: T[]; page: FdxPage }> {
  const account = await requireAccount(db, caller, accountId);
  const window = withinLookback(caller, resolveDateRange(query.startTime, query.endTime));
  const startId = await checkPageKey(query.pageKey, (id) => source.belongsTo(db, account.id, id));
  const [rows, total] = await Promise.all([
    source.list(db, account.id, window, startId, query.limit),
    source.count(db, account.id, window),
  ]);
  return fdxPage(rows, query.limit, total);
}
