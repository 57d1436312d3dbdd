import { defineRoute } from '../routing/route-spec.js';
import { AccountParams, FDX_ROUTE } from './account-routes.js';
import { ActivityQuery, listAccountActivity } from './activity-list.js';
import { transactionActivity } from './activity-service.js';
import { ListTransactionsResponse, toTransaction } from './shapes.js';

export const transactionRoutes = [
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'listAccountTransactions',
    method: 'get',
    path: '/fdx/v6/accounts/:id/transactions',
    summary: "An account's transactions by transaction time, newest first",
    tag: 'FDX Transactions',
    params: AccountParams,
    query: ActivityQuery,
    response: ListTransactionsResponse,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query }) {
      const { items, page } = await listAccountActivity(db, caller, params.id, query, transactionActivity);
      return { page, transactions: items.map(toTransaction) };
    },
  }),
];
