import { z } from 'zod';
import { API_VERSIONS } from '../routing/versions.js';
import { defineRoute } from '../routing/route-spec.js';
import { accountsPage, accountTotals, isCallersAccount, organizationOf } from './accounts-service.js';
import { checkPageKey, requireAccount, scopeOf } from './access.js';
import { fdxPage, limitParam, pageKeyParam } from './paging.js';
import { customerNotFound } from './problems.js';
import {
  AccountContact,
  CustomerListResponse,
  DepositAccountDetails,
  ListAccountsResponse,
  toAccountContact,
  toCustomer,
  toDepositAccount,
  toDepositAccountDetails,
} from './shapes.js';

/** Shared by every FDX operation: path-versioned, access tokens only, IP-restricted area 'fdx'. */
export const FDX_ROUTE = { versions: API_VERSIONS, pathVersioned: true, area: 'fdx', access: 'fdx', credentials: 'access_token' } as const;
export const AccountParams = z.object({ id: z.string().max(100).describe('The accountId (a UUID)') });

export const accountRoutes = [
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'listAccounts',
    method: 'get',
    path: '/fdx/v6/accounts',
    summary: "The authorizing organization's deposit accounts",
    tag: 'FDX Accounts',
    query: z.object({ limit: limitParam, pageKey: pageKeyParam }),
    response: ListAccountsResponse,
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const scope = scopeOf(caller);
      const startId = await checkPageKey(query.pageKey, (id) => isCallersAccount(db, scope, id));
      const { rows, total } = await accountsPage(db, scope, startId, query.limit);
      const { items, page } = fdxPage(rows, query.limit, total);
      return { organizationId: caller.organizationId, page, accounts: items.map(toDepositAccount) };
    },
  }),
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'getAccount',
    method: 'get',
    path: '/fdx/v6/accounts/:id',
    summary: 'A deposit account with its balances',
    tag: 'FDX Accounts',
    params: AccountParams,
    response: DepositAccountDetails,
    errors: [401, 403, 404],
    async handler({ db, caller, params }) {
      const account = await requireAccount(db, caller, params.id);
      return toDepositAccountDetails(account, await accountTotals(db, account.id), new Date());
    },
  }),
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'getAccountContact',
    method: 'get',
    path: '/fdx/v6/accounts/:id/contact',
    summary: "The account holder's organization-level contact details",
    tag: 'FDX Contact',
    params: AccountParams,
    response: AccountContact,
    errors: [401, 403, 404],
    async handler({ db, caller, params }) {
      await requireAccount(db, caller, params.id);
      const org = await organizationOf(db, caller.organizationId);
      if (!org) throw customerNotFound();
      return toAccountContact(org);
    },
  }),
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'listAccountCustomers',
    method: 'get',
    path: '/fdx/v6/accounts/:id/customers',
    summary: 'The customers of an account: the organization that holds it',
    tag: 'FDX Customers',
    params: AccountParams,
    response: CustomerListResponse,
    errors: [401, 403, 404],
    async handler({ db, caller, params }) {
      await requireAccount(db, caller, params.id);
      const org = await organizationOf(db, caller.organizationId);
      if (!org) throw customerNotFound();
      return { page: { totalElements: 1 }, customers: [toCustomer(org)] };
    },
  }),
];
