import { z } from 'zod';
import {
  financialAccountBalanceOf,
  financialAccountOf,
  financialAccountsOf,
  type FinancialAccountRow,
} from '../../grantmaking/accounts-service.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { ACCOUNT_HOLDERS, scopeOf } from './callers.js';

/** The published FinancialAccount (its balances are a separate operation, read from the ledger). */
const FinancialAccount = z.object({
  id: z.string(),
  name: z.string(),
  account_type: z.enum(['disbursements', 'processing']),
  bank_provider: z.string(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

const FinancialAccountBalance = z.object({
  current_balance: z.number().int().describe('Cents: available plus held'),
  available_balance: z.number().int().describe('Cents: what a new disbursement may use'),
  timestamp: z.string().datetime(),
});

function toFinancialAccount(row: FinancialAccountRow) {
  return {
    id: row.id,
    name: row.name,
    account_type: row.account_type,
    bank_provider: row.bank_provider,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const Params = z.object({ id: z.string().min(1).max(100) });
const common = {
  tag: 'financial_accounts',
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grantmaking',
  access: 'read',
  credentials: 'any',
  // Nonprofits and platforms read their processing accounts (docs/giving.md, "Money").
  callers: ACCOUNT_HOLDERS,
} as const;

export const financialAccountRoutes = [
  defineRoute({
    ...common,
    operationId: 'listFinancialAccounts',
    method: 'get',
    path: '/v1/financial_accounts',
    summary: "List the grantmaker's financial accounts",
    response: z.object({ results: z.array(FinancialAccount) }),
    errors: [400, 401, 403],
    async handler({ db, caller }) {
      return { results: (await financialAccountsOf(db, scopeOf(caller))).map(toFinancialAccount) };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getFinancialAccount',
    method: 'get',
    path: '/v1/financial_accounts/:id',
    summary: "Get one of the grantmaker's financial accounts",
    params: Params,
    response: FinancialAccount,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await financialAccountOf(db, scopeOf(caller), params.id);
      if (!row) throw resourceNotFound('The financial account');
      return toFinancialAccount(row);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getFinancialAccountBalance',
    method: 'get',
    path: '/v1/financial_accounts/:id/balance',
    summary: "A financial account's balances in cents, from the ledger",
    params: Params,
    response: FinancialAccountBalance,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const balance = await financialAccountBalanceOf(db, scopeOf(caller), params.id);
      if (!balance) throw resourceNotFound('The financial account');
      return { ...balance, timestamp: balance.timestamp.toISOString() };
    },
  }),
];
