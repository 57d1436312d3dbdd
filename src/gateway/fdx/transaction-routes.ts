import { z } from 'zod';
import { defineRoute } from '../route-spec.js';
import { countTransactions, listTransactions, transactionBelongsTo } from './activity-repository.js';
import { AccountParams, FDX_ROUTE } from './account-routes.js';
import { checkPageKey, requireAccount } from './access.js';
import { resolveDateRange } from './dates.js';
import { fdxPage, limitParam, pageKeyParam } from './paging.js';
import { ListTransactionsResponse, toTransaction } from './shapes.js';

/** Checked by resolveDateRange, so that every bad date is FDX code 703 rather than a generic 400. */
export const DateParams = {
  startTime: z.string().optional().describe('YYYY-MM-DD, inclusive; with endTime or neither (the last 7 days)'),
  endTime: z.string().optional().describe('YYYY-MM-DD, inclusive; with startTime or neither'),
};

export const transactionRoutes = [
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'listAccountTransactions',
    method: 'get',
    path: '/fdx/v6/accounts/:id/transactions',
    summary: "An account's transactions by transaction time, newest first",
    tag: 'FDX Transactions',
    params: AccountParams,
    query: z.object({ limit: limitParam, pageKey: pageKeyParam, ...DateParams }),
    response: ListTransactionsResponse,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query }) {
      const account = await requireAccount(db, caller, params.id);
      const window = resolveDateRange(query.startTime, query.endTime);
      const startId = await checkPageKey(query.pageKey, (id) => transactionBelongsTo(db, account.id, id));
      const [rows, total] = await Promise.all([listTransactions(db, account.id, window, startId, query.limit), countTransactions(db, account.id, window)]);
      const { items, page } = fdxPage(rows, query.limit, total);
      return { page, transactions: items.map(toTransaction) };
    },
  }),
];
