import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/**
 * What a copy of the database holds: every row of every table of the public schema as JSON
 * text (row_to_json, so every text, jsonb and other column is in it), one string.
 */
export async function dumpAllRows(db: Db): Promise<string> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const parts: string[] = [];
  for (const { table_name: table } of tables.rows) {
    const { rows } = await sql<{ t: string | null }>`select string_agg(row_to_json(x)::text, ' ') as t from ${sql.table(table)} x`.execute(
      db,
    );
    parts.push(rows[0]?.t ?? '');
  }
  return parts.join('\n');
}
