import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { FinancialAccountsTable, ProgramsTable } from '../db/schema-grantmaking.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';

/** Financial accounts, programs and the environment's platform ledger accounts (docs/grantmaking.md). */

export type Scope = { organizationId: string; environment: Environment };

/** The environment-wide ledger accounts (docs/ledger.md, "Accounts and purposes"). */
export type PlatformPurpose = 'external' | 'dafpay_network';

export function insertFinancialAccount(db: Executor, values: Insertable<FinancialAccountsTable>) {
  return db.insertInto('financial_accounts').values(values).returningAll().executeTakeFirstOrThrow();
}

export function insertProgram(db: Executor, values: Insertable<ProgramsTable>) {
  return db.insertInto('programs').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The organization's financial accounts in one environment, oldest first (a handful: the list is not paged). */
export function listFinancialAccounts(db: Executor, scope: Scope) {
  return db
    .selectFrom('financial_accounts')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findFinancialAccount(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('financial_accounts')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listPrograms(db: Executor, scope: Scope, cursor: Cursor | undefined, limit: number) {
  const query = db
    .selectFrom('programs')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findProgram(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('programs')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/**
 * Serialises, to the end of the caller's transaction, the opening of an environment's platform
 * ledger account: the second opener waits, then reads the first one's row.
 */
export async function lockPlatformAccounts(db: Executor, environment: Environment): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`almoner:platform_ledger_accounts:${environment}`}))`.execute(db);
}

export async function findPlatformAccount(db: Executor, environment: Environment, purpose: PlatformPurpose) {
  const row = await db
    .selectFrom('platform_ledger_accounts')
    .select('ledger_account_id')
    .where('environment', '=', environment)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  return row?.ledger_account_id;
}

export async function insertPlatformAccount(
  db: Executor,
  values: { environment: Environment; purpose: PlatformPurpose; ledger_account_id: string },
) {
  await db.insertInto('platform_ledger_accounts').values(values).execute();
}

/** An organization's processing financial account in an environment (DAFpay grants pay into it). */
export function findProcessingAccount(db: Executor, organizationId: string, environment: Environment) {
  return db
    .selectFrom('financial_accounts')
    .select(['id', 'available_ledger_account_id'])
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where('account_type', '=', 'processing')
    .executeTakeFirst();
}
