import { sql } from 'kysely';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement, runPrepared } from '../../src/db/prepared-statements.js';
import { parseTimestamptz } from '../../src/db/timestamp-parser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe('prepared statements', () => {
  const answer = preparedStatement<{ n: number; label: string }>('test_hot_path_answer', 'select $1::int + 1 as n, $2::text as label');

  it('run a registered text as a named statement, prepared once per connection', async () => {
    const rows = await t.db.connection().execute(async (conn) => {
      const first = await runPrepared(conn, answer, [41, 'a']);
      const second = await runPrepared(conn, answer, [1, 'b']);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn);
      return { first, second, prepared: prepared.rows.map((r) => r.name) };
    });
    expect(rows.first).toEqual([{ n: 42, label: 'a' }]);
    expect(rows.second).toEqual([{ n: 2, label: 'b' }]);
    expect(rows.prepared).toEqual(['test_hot_path_answer']);
  });

  it('leave every other statement unnamed', async () => {
    const prepared = await t.db.connection().execute(async (conn) => {
      await sql`select ${1}::int + 1 as n`.execute(conn);
      return (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn)).rows.map((r) => r.name);
    });
    expect(prepared.filter((name) => name !== 'test_hot_path_answer')).toEqual([]);
  });

  it('refuse one name for two texts', () => {
    expect(() => preparedStatement('test_hot_path_answer', 'select 2')).toThrow(/another text/);
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
    const { rows } = await sql<{ at: Date; microseconds: Date }>`select '2025-06-12 01:45:07.441+00'::timestamptz as at, '2025-06-12 01:45:07.291999+00'::timestamptz as microseconds`.execute(t.db);
    expect(rows[0]!.at.toISOString()).toBe('2025-06-12T01:45:07.441Z');
    expect(rows[0]!.microseconds.toISOString()).toBe('2025-06-12T01:45:07.291Z');
  });
});
