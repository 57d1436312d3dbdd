import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrator.js';
import { TABLE_COLUMNS } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe('migrations', () => {
  it('leave nothing to apply on a migrated database', async () => {
    expect(await migrateToLatest(t.db)).toEqual({ applied: [] });
  });

  it('produce exactly the tables and columns the TypeScript schema declares', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'public' and table_name not like 'schema_migrations%'
      order by table_name, ordinal_position`.execute(t.db);
    const actual: Record<string, string[]> = {};
    for (const row of rows) (actual[row.table_name] ??= []).push(row.column_name);
    const declared = Object.fromEntries(Object.entries(TABLE_COLUMNS).map(([table, columns]) => [table, [...columns].sort()]));
    const found = Object.fromEntries(Object.entries(actual).map(([table, columns]) => [table, columns.sort()]));
    expect(found).toEqual(declared);
  });

  it('reject an EIN that is not nine digits and a duplicate EIN', async () => {
    await expect(
      t.db.insertInto('organizations').values({ ein: '12-3456789', name: 'X', kind: 'nonprofit' }).execute(),
    ).rejects.toMatchObject({ code: '23514' });
    await t.db.insertInto('organizations').values({ ein: '555555555', name: 'X', kind: 'nonprofit' }).execute();
    await expect(
      t.db.insertInto('organizations').values({ ein: '555555555', name: 'Y', kind: 'nonprofit' }).execute(),
    ).rejects.toMatchObject({ code: '23505', constraint: 'organizations_ein_key' });
  });

  it('store e-mail addresses only in normalised form', async () => {
    await expect(t.db.insertInto('users').values({ email: 'Someone@Example.org', password_hash: 'x' }).execute()).rejects.toMatchObject({
      code: '23514',
    });
  });
});
