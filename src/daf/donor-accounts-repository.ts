import type { Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { DonorAccountsTable, DonorAccountStatus } from '../db/schema-daf.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { DafScope } from './scope.js';

export type DonorAccountRow = Selectable<DonorAccountsTable>;

export function findDonorAccount(db: Executor, scope: DafScope, id: string, forUpdate = false) {
  let query = db
    .selectFrom('donor_accounts')
    .selectAll()
    .where('id', '=', id)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function findDonorAccountByEmail(db: Executor, scope: Omit<DafScope, 'principal'>, email: string) {
  return db
    .selectFrom('donor_accounts')
    .selectAll()
    .where('email', '=', email)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment)
    .forUpdate()
    .executeTakeFirst();
}

/** Whether the provider already has an account for this email (no lock: the unique index decides races). */
export function findDonorAccountIdByEmail(db: Executor, scope: Omit<DafScope, 'principal'>, email: string) {
  return db
    .selectFrom('donor_accounts')
    .select('id')
    .where('email', '=', email)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export interface DonorAccountFilters {
  status?: DonorAccountStatus;
  email?: string;
  externalId?: string;
  givingPoolId?: string;
}

export function listDonorAccounts(db: Executor, scope: DafScope, filters: DonorAccountFilters, cursor: Cursor | undefined, limit: number) {
  let query = db
    .selectFrom('donor_accounts')
    .selectAll()
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.email) query = query.where('email', '=', filters.email.toLowerCase());
  if (filters.externalId) query = query.where('external_id', '=', filters.externalId);
  if (filters.givingPoolId) {
    const poolId = filters.givingPoolId;
    query = query.where('id', 'in', (eb) => eb.selectFrom('giving_pools').select('donor_account_id').where('id', '=', poolId));
  }
  return newestFirstPage(query, cursor, limit).execute();
}

export function insertDonorAccount(
  db: Executor,
  values: {
    id: string;
    environment: DafScope['environment'];
    fund_provider_id: string;
    email: string;
    first_name?: string | null;
    last_name?: string | null;
    phone?: string | null;
    external_id?: string | null;
    metadata?: Record<string, string>;
  },
) {
  return db
    .insertInto('donor_accounts')
    .values({ ...values, metadata: JSON.stringify(values.metadata ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateDonorAccount(
  db: Executor,
  id: string,
  changes: Partial<Omit<DonorAccountRow, 'id' | 'metadata' | 'created_at'>> & { metadata?: Record<string, string> },
) {
  const { metadata, ...rest } = changes;
  return db
    .updateTable('donor_accounts')
    .set({ ...rest, ...(metadata ? { metadata: JSON.stringify(metadata) } : {}), updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
