import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/** Rows of each table that hang off an organization (label, table, column), counted in one statement. */
export async function countRowsOfOrganization(
  db: Executor,
  organizationId: string,
  tables: readonly (readonly [string, string, string])[],
): Promise<{ label: string; n: number }[]> {
  const parts = tables.map(
    ([label, table, column]) =>
      sql`select ${label}::text as label, count(*)::int as n from ${sql.table(table)} where ${sql.ref(column)} = ${organizationId}`,
  );
  const { rows } = await sql<{ label: string; n: number }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return rows;
}

/** Deletes the organization; every table that references it does so ON DELETE CASCADE. */
export function deleteOrganization(db: Executor, organizationId: string) {
  return db.deleteFrom('organizations').where('id', '=', organizationId).execute();
}

/**
 * Deletes the organization's processing financial accounts that never moved money (no ledger
 * entry on either side) with their ledger accounts: every nonprofit and platform gets them when
 * added (docs/giving.md, "Money"), and an account that never held a cent is no money record.
 */
export async function deleteUnusedProcessingAccounts(db: Executor, organizationId: string): Promise<void> {
  const { rows } = await sql<{ available: string; held: string }>`
    delete from financial_accounts f
    where f.organization_id = ${organizationId} and f.account_type = 'processing'
      and not exists (select 1 from ledger_entries e where e.account_id in (f.available_ledger_account_id, f.held_ledger_account_id))
    returning f.available_ledger_account_id as available, f.held_ledger_account_id as held`.execute(db);
  const ids = rows.flatMap((r) => [r.available, r.held]);
  if (ids.length > 0) await db.deleteFrom('ledger_accounts').where('id', 'in', ids).execute();
}
