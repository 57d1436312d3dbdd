import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, type Trx } from '../../src/db/executor.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * inTransaction within an open transaction (a handler run in its idempotency key's transaction,
 * docs/api.md, "Idempotency"): the inner work commits or rolls back with the outer transaction,
 * and an inner failure undoes only the inner work, as a transaction of its own would have.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await sql`create table executor_scratch (name text primary key)`.execute(t.db);
});
afterAll(async () => t?.drop());

const add = (db: Trx, name: string) => sql`insert into executor_scratch (name) values (${name})`.execute(db);
async function names(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from executor_scratch order by name`.execute(t.db);
  return rows.map((row) => row.name);
}

describe('inTransaction', () => {
  it('outside a transaction, opens one: committed when it resolves, rolled back when it throws', async () => {
    await inTransaction(t.db, (trx) => add(trx, 'plain'));
    await expect(
      inTransaction(t.db, async (trx) => {
        await add(trx, 'plain-undone');
        throw new Error('fails');
      }),
    ).rejects.toThrow('fails');
    expect(await names()).toEqual(['plain']);
    await sql`truncate executor_scratch`.execute(t.db);
  });

  it('inside a transaction, runs in it: its work commits with the outer one, on the same connection', async () => {
    await inTransaction(t.db, async (outer) => {
      await add(outer, 'outer');
      const inner = await inTransaction(outer, async (trx) => {
        await add(trx, 'inner');
        // The outer transaction's uncommitted row is visible: one connection, one transaction.
        return (await sql<{ n: number }>`select count(*)::int as n from executor_scratch`.execute(trx)).rows[0]!.n;
      });
      expect(inner).toBe(2);
      expect(await names()).toEqual([]);
    });
    expect(await names()).toEqual(['inner', 'outer']);
    await sql`truncate executor_scratch`.execute(t.db);
  });

  it('an inner failure undoes only the inner work; the outer transaction goes on and commits', async () => {
    await inTransaction(t.db, async (outer) => {
      await add(outer, 'kept');
      await expect(
        inTransaction(outer, async (trx) => {
          await add(trx, 'undone');
          await add(trx, 'kept'); // a unique violation: the transaction would be aborted without the savepoint
        }),
      ).rejects.toThrow(/duplicate key/);
      await add(outer, 'after');
    });
    expect(await names()).toEqual(['after', 'kept']);
    await sql`truncate executor_scratch`.execute(t.db);
  });

  it('an outer failure after the inner one resolved rolls back both', async () => {
    await expect(
      inTransaction(t.db, async (outer) => {
        await inTransaction(outer, (trx) => add(trx, 'inner'));
        await inTransaction(outer, (trx) => inTransaction(trx, (deeper) => add(deeper, 'deeper')));
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await names()).toEqual([]);
  });
});
