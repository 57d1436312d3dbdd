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
