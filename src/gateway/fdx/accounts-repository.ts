import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';

/** Whose data a call may see: the authorizing organization, in the host's environment. */
export interface Scope {
  organizationId: string;
  environment: Environment;
  /** The accounts a consent chose (fdx/consent-scope.ts); undefined: all of the organization's. */
  accountIds?: readonly string[];
}

export interface AccountRow {
  id: string;
  account_number: string;
  routing_transit_number: string;
  product_name: string;
  nickname: string | null;
  description: string | null;
  status: string;
  currency: string;
  opened_on: string;
  closed_on: string | null;
  opening_balance: string;
}

function selectAccounts(db: Db, scope: Scope) {
  return (
    db
      .selectFrom('deposit_accounts')
      .select([
        'id',
        'account_number',
        'routing_transit_number',
        'product_name',
        'nickname',
        'description',
        'status',
        'currency',
        'opening_balance',
      ])
      // Dates as text: pg would otherwise build a Date at local midnight.
      .select([sql<string>`opened_on::text`.as('opened_on'), sql<string | null>`closed_on::text`.as('closed_on')])
      .where('organization_id', '=', scope.organizationId)
      .where('environment', '=', scope.environment)
      .where(chosen(scope))
  );
}

/** Only the accounts a consent chose, when it chose them: any other is as absent as another organization's. */
function chosen(scope: Scope) {
  if (!scope.accountIds) return sql<boolean>`true`;
  return scope.accountIds.length === 0 ? sql<boolean>`false` : sql<boolean>`id in (${sql.join(scope.accountIds)})`;
}

/** One organization's accounts, oldest first, from the row `startId` names (index deposit_accounts_page_idx). */
export function listAccounts(db: Db, scope: Scope, startId: string | undefined, limit: number): Promise<AccountRow[]> {
  let query = selectAccounts(db, scope);
  // The cursor row's own values are compared in SQL, so timestamps keep their microseconds.
  if (startId) query = query.where(sql<boolean>`(created_at, id) >= (select created_at, id from deposit_accounts where id = ${startId})`);
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export async function countAccounts(db: Db, scope: Scope): Promise<number> {
  const row = await db
    .selectFrom('deposit_accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where(chosen(scope))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findAccount(db: Db, scope: Scope, id: string): Promise<AccountRow | undefined> {
  return selectAccounts(db, scope).where('id', '=', id).executeTakeFirst();
}

/** Sums in cents: posted transactions (signed) and pending debits (holds on the available balance). */
export async function accountActivityTotals(db: Db, accountId: string): Promise<{ posted: number; pendingDebits: number }> {
  const row = await db
    .selectFrom('deposit_transactions')
    .select([
      sql<string>`coalesce(sum(case when status = 'POSTED' then case debit_credit when 'CREDIT' then amount else -amount end end), 0)`.as(
        'posted',
      ),
      sql<string>`coalesce(sum(case when status = 'PENDING' and debit_credit = 'DEBIT' then amount end), 0)`.as('pending_debits'),
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { posted: Number(row.posted), pendingDebits: Number(row.pending_debits) };
}

export function findOrganization(db: Db, id: string) {
  return db
    .selectFrom('organizations')
    .select(['id', 'ein', 'name', 'kind', 'address_line1', 'address_line2', 'city', 'region', 'postal_code', 'country'])
    .where('id', '=', id)
    .executeTakeFirst();
}
export type OrganizationRow = NonNullable<Awaited<ReturnType<typeof findOrganization>>>;
