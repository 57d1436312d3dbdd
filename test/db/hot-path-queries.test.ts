import { spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PREPARED_TEXTS, preparedName, runPrepared } from '../../src/db/prepared-statements.js';
import { parseTimestamptz } from '../../src/db/timestamp-parser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe('prepared statements', () => {
  const answer = (n: number, label: string) => sql<{ n: number; label: string }>`select ${n}::int + 1 as n, ${label}::text as label`;

  it('run a query as a named statement, prepared once per connection, under its family and a hash of its text', async () => {
    const rows = await t.db.connection().execute(async (conn) => {
      const first = await runPrepared(conn, 'test_hot_path_answer', answer(41, 'a'));
      const second = await runPrepared(conn, 'test_hot_path_answer', answer(1, 'b'));
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn);
      return { first, second, prepared: prepared.rows.map((r) => r.name) };
    });
    expect(rows.first).toEqual([{ n: 42, label: 'a' }]);
    expect(rows.second).toEqual([{ n: 2, label: 'b' }]);
    expect(rows.prepared).toEqual([preparedName(answer(0, '').compile(t.db).sql)]);
    expect(rows.prepared[0]).toMatch(/^test_hot_path_answer_[A-Za-z0-9_-]{16}$/);
  });

  it('take a query builder too: one text, so one name, for every value', async () => {
    const query = (id: string) => t.db.selectFrom('users').select(['id', 'email']).where('id', '=', id);
    await runPrepared(t.db, 'test_hot_path_users', query('00000000-0000-0000-0000-000000000001'));
    await runPrepared(t.db, 'test_hot_path_users', query('00000000-0000-0000-0000-000000000002'));
    expect(preparedName(query('x').compile().sql)).toMatch(/^test_hot_path_users_/);
  });

  it('leave every other statement unnamed', async () => {
    const prepared = await t.db.connection().execute(async (conn) => {
      await sql`select ${1}::int + 2 as unnamed`.execute(conn);
      return (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(conn)).rows.map((r) => r.statement);
    });
    expect(prepared.filter((text) => text.includes('as unnamed'))).toEqual([]);
  });

  it(`stop naming new texts past ${MAX_PREPARED_TEXTS}: a text that varies with its values cannot grow the registry without end`, () => {
    // In a child process: the registry is the process's, and test files share a worker's
    // modules (isolate: false), so filling it here would leave every later file's statements unnamed.
    const script = `
      const { sql } = await import('kysely');
      const { MAX_PREPARED_TEXTS, preparedName, runPrepared } = await import(${JSON.stringify(new URL('../../src/db/prepared-statements.ts', import.meta.url).href)});
      const { createDatabase } = await import(${JSON.stringify(new URL('../../src/db/database.ts', import.meta.url).href)});
      const db = createDatabase({ url: process.env.BOUND_TEST_DB });
      for (let i = 0; i < MAX_PREPARED_TEXTS + 5; i += 1) await runPrepared(db, 'test_hot_path_varying', sql.raw('select ' + i + ' as n'));
      const named = Array.from({ length: MAX_PREPARED_TEXTS + 5 }, (_, i) => preparedName('select ' + i + ' as n')).filter(Boolean).length;
      const last = preparedName('select ' + (MAX_PREPARED_TEXTS + 4) + ' as n') ?? null;
      const past = await runPrepared(db, 'test_hot_path_varying', sql.raw('select 9999 as n'));
      await db.destroy();
      console.log(JSON.stringify({ named, last, past }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, BOUND_TEST_DB: t.url },
    });
    expect(child.status, child.stderr).toBe(0);
    const result = JSON.parse(child.stdout.trim().split('\n').pop()!) as { named: number; last: string | null; past: unknown };
    expect(result.named).toBeGreaterThan(0);
    expect(result.named).toBeLessThanOrEqual(MAX_PREPARED_TEXTS);
    expect(result.last).toBeNull();
    // Still answered, unnamed.
    expect(result.past).toEqual([{ n: 9999 }]);
  });
});

describe('timestamptz parsing', () => {
  // pg's own parser (postgres-date), which the fast path must agree with exactly.
  const parseDate = pg.types.getTypeParser(1184, 'text') as (value: string) => unknown;

  it('gives what pg would for every shape PostgreSQL prints', () => {
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 60 }),
        fc.stringMatching(/^(\.\d{1,6})?$/),
        fc.constantFrom('+00', '+00', '-08', '+05:30', '+00:00', '', ' BC'),
        (year, month, day, hour, minute, second, fraction, zone) => {
          const text = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)} ${two(hour)}:${two(minute)}:${two(second)}${fraction}${zone}`;
          const expected = parseDate(text) as Date;
          const actual = parseTimestamptz(text) as Date;
          expect(actual instanceof Date).toBe(true);
          expect(Object.is(actual.getTime(), expected.getTime())).toBe(true);
        },
      ),
      { numRuns: 20_000 },
    );
    expect(parseTimestamptz('infinity')).toBe(Infinity);
    expect(parseTimestamptz('-infinity')).toBe(-Infinity);
  });

  it('is what the pool uses for timestamptz columns', async () => {
    const { rows } = await sql<{
      at: Date;
      microseconds: Date;
    }>`select '2025-06-12 01:45:07.441+00'::timestamptz as at, '2025-06-12 01:45:07.291999+00'::timestamptz as microseconds`.execute(t.db);
    expect(rows[0]!.at.toISOString()).toBe('2025-06-12T01:45:07.441Z');
    expect(rows[0]!.microseconds.toISOString()).toBe('2025-06-12T01:45:07.291Z');
  });
});
