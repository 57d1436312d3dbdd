import { z } from 'zod';
import { formatEin } from '../../accounts/ein.js';
import type { AccountRow, OrganizationRow } from './accounts-repository.js';
import type { StatementRow, TransactionRow } from './activity-repository.js';
import { PageSchema } from './paging.js';

/**
 * The FDX shapes of openapi/fdx-v6.yaml as zod schemas (they generate /openapi.json), and the
 * mappers from rows to them, so column names never leak into responses. Amounts are dollars
 * (FDX numbers); the database keeps cents.
 */

const Address = z.object({
  line1: z.string(),
  line2: z.string().optional(),
  city: z.string(),
  region: z.string(),
  postalCode: z.string(),
  country: z.string(),
});
const PersonName = z.object({ first: z.string().optional(), last: z.string().optional(), company: z.string().optional() });
const BusinessCustomer = z.object({ name: z.string(), registeredId: z.string().optional() });
const Link = z.object({ href: z.string() });

export const DepositAccount = z.object({
  accountCategory: z.literal('DEPOSIT_ACCOUNT'),
  accountType: z.literal('CHECKING'),
  accountId: z.string().uuid(),
  accountNumber: z.string(),
  accountNumberDisplay: z.string().describe('The account number masked to its last four digits'),
  productName: z.string(),
  nickName: z.string().optional(),
  currency: z.object({ currencyCode: z.string() }),
  status: z.enum(['OPEN', 'CLOSED', 'DELINQUENT', 'NEGATIVECURRENTBALANCE', 'PAID', 'PENDINGCLOSE', 'PENDINGOPEN', 'RESTRICTED']),
  description: z.string().optional(),
  accountOpenDate: z.string().date(),
  accountCloseDate: z.string().date().optional(),
});
export const DepositAccountDetails = DepositAccount.extend({
  currentBalance: z.number(),
  availableBalance: z.number(),
  balanceAsOf: z.string().datetime(),
  routingTransitNumber: z.string(),
  balanceType: z.literal('ASSET'),
  transferIn: z.boolean(),
  transferOut: z.boolean(),
});
export const ListAccountsResponse = z.object({ organizationId: z.string().uuid(), page: PageSchema, accounts: z.array(DepositAccount) });

export const Customer = z.object({
  customerId: z.string().uuid().describe('The organizationId'),
  name: PersonName,
  taxId: z.string().describe('EIN, 12-3456789'),
  type: z.literal('BUSINESS'),
  addresses: z.array(Address),
  businessCustomer: BusinessCustomer,
});
export const CustomerListResponse = z.object({ page: PageSchema, customers: z.array(Customer) });
export const AccountContact = z.object({
  holders: z.array(
    z.object({
      name: PersonName,
      relationship: z.literal('BUSINESS'),
      type: z.literal('BUSINESS'),
      businessCustomer: BusinessCustomer,
      addresses: z.array(Address),
    }),
  ),
  emails: z.array(z.string()),
  addresses: z.array(Address),
  telephones: z.array(z.object({ type: z.string(), number: z.string() })),
});

export const Statement = z.object({
  statementId: z.string().uuid(),
  accountId: z.string().uuid(),
  statementDate: z.string().datetime().describe('The last day of the statement period'),
  description: z.string(),
  status: z.literal('AVAILABLE'),
  links: z.array(Link),
});
export const ListStatementsResponse = z.object({ page: PageSchema, statements: z.array(Statement) });

export const DepositTransaction = z.object({
  accountCategory: z.literal('DEPOSIT_ACCOUNT'),
  accountId: z.string().uuid(),
  transactionId: z.string().uuid(),
  transactionTimestamp: z.string().datetime(),
  postedTimestamp: z.string().datetime().optional().describe('Present when status is POSTED'),
  description: z.string(),
  memo: z.string().optional(),
  debitCreditMemo: z.enum(['DEBIT', 'CREDIT']),
  status: z.enum(['POSTED', 'PENDING']),
  amount: z.number().describe('Absolute amount in dollars; debitCreditMemo gives the direction'),
  reference: z.string(),
  transactionType: z.string(),
  payee: z.string().optional(),
  checkNumber: z.number().int().optional(),
});
export const ListTransactionsResponse = z.object({ page: PageSchema, transactions: z.array(DepositTransaction) });

export const dollars = (cents: number | string) => Number(cents) / 100;
export const maskAccountNumber = (accountNumber: string) => `...${accountNumber.slice(-4)}`;
const optional = <K extends string, V>(key: K, value: V | null | undefined) =>
  value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);

export function toDepositAccount(row: AccountRow): z.infer<typeof DepositAccount> {
  return {
    accountCategory: 'DEPOSIT_ACCOUNT',
    accountType: 'CHECKING',
    accountId: row.id,
    accountNumber: row.account_number,
    accountNumberDisplay: maskAccountNumber(row.account_number),
    productName: row.product_name,
    ...optional('nickName', row.nickname),
    currency: { currencyCode: row.currency },
    status: row.status as z.infer<typeof DepositAccount>['status'],
    ...optional('description', row.description),
    accountOpenDate: row.opened_on,
    ...optional('accountCloseDate', row.closed_on),
  };
}

/** Balances follow from the stored transactions: current = opening + posted; available also holds pending debits. */
export function toDepositAccountDetails(
  row: AccountRow,
  totals: { posted: number; pendingDebits: number },
  asOf: Date,
): z.infer<typeof DepositAccountDetails> {
  const current = Number(row.opening_balance) + totals.posted;
  const open = row.status === 'OPEN';
  return {
    ...toDepositAccount(row),
    currentBalance: dollars(current),
    availableBalance: dollars(current - totals.pendingDebits),
    balanceAsOf: asOf.toISOString(),
    routingTransitNumber: row.routing_transit_number,
    balanceType: 'ASSET',
    transferIn: open,
    transferOut: open,
  };
}

function addressesOf(org: OrganizationRow): z.infer<typeof Address>[] {
  if (!org.address_line1 || !org.city || !org.region || !org.postal_code) return [];
  return [
    {
      line1: org.address_line1,
      ...optional('line2', org.address_line2),
      city: org.city,
      region: org.region,
      postalCode: org.postal_code,
      country: org.country,
    },
  ];
}

/** Organization-level identity only: consent is given by the organization, not its people. */
export function toCustomer(org: OrganizationRow): z.infer<typeof Customer> {
  const taxId = formatEin(org.ein);
  return {
    customerId: org.id,
    name: { company: org.name },
    taxId,
    type: 'BUSINESS',
    addresses: addressesOf(org),
    businessCustomer: { name: org.name, registeredId: taxId },
  };
}

export function toAccountContact(org: OrganizationRow): z.infer<typeof AccountContact> {
  const customer = toCustomer(org);
  return {
    holders: [
      {
        name: customer.name,
        relationship: 'BUSINESS',
        type: 'BUSINESS',
        businessCustomer: customer.businessCustomer,
        addresses: customer.addresses,
      },
    ],
    emails: [],
    addresses: customer.addresses,
    telephones: [],
  };
}

/** The download link is a path on the same API host (hosts differ per environment). */
export function toStatement(row: StatementRow): z.infer<typeof Statement> {
  const month = row.period_start.slice(0, 7);
  return {
    statementId: row.id,
    accountId: row.account_id,
    statementDate: `${row.period_end}T00:00:00.000Z`,
    description: `Statement for ${month} (${row.period_start} to ${row.period_end})`,
    status: 'AVAILABLE',
    links: [{ href: `/fdx/v6/accounts/${row.account_id}/statements/${row.id}` }],
  };
}

export function toTransaction(row: TransactionRow): z.infer<typeof DepositTransaction> {
  return {
    accountCategory: 'DEPOSIT_ACCOUNT',
    accountId: row.account_id,
    transactionId: row.id,
    transactionTimestamp: row.transaction_timestamp.toISOString(),
    ...(row.status === 'POSTED' && row.posted_timestamp ? { postedTimestamp: row.posted_timestamp.toISOString() } : {}),
    description: row.description,
    ...optional('memo', row.memo),
    debitCreditMemo: row.debit_credit,
    status: row.status,
    amount: dollars(row.amount),
    reference: row.reference,
    transactionType: row.transaction_type,
    ...optional('payee', row.payee),
    ...optional('checkNumber', row.check_number),
  };
}
