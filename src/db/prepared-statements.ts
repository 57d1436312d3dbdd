import crypto from 'node:crypto';
import type { Compilable, RawBuilder } from 'kysely';
import pg from 'pg';
import type { Executor } from './executor.js';

/**
 * Named prepared statements for the queries every API call or sign-in runs. PostgreSQL parses and plans an unnamed statement on every execution; the
 * credential lookup's join spends more time being planned (about 0.2 ms) than executed. A
 * prepared statement is parsed once per pooled connection and its plan reused (generic once
 * PostgreSQL finds it no worse).
 *
 * One way in: `runPrepared(db, family, query)` with any Kysely query, a builder or `sql`.
 * Its text is registered under `<family>_<hash of the text>` the first time it is seen, so
 * the same text always has the same name and no name ever has two texts. Only queries
 * whose text comes in a handful of shapes belong here (values are parameters, not text);
 * the registry is bounded so a mistake cannot grow it without end: past the bound, new
 * texts run unnamed, as any other query.
 *
 * Texts list their columns: a `select *` cached plan would fail with "cached plan must not
 * change result type" after another process's migration adds a column.
 */
export const MAX_PREPARED_TEXTS = 256;
const namesByText = new Map<string, string>();

function isRawBuilder<Row>(query: RawBuilder<Row> | Compilable<Row>): query is RawBuilder<Row> {
  return (query as { isRawBuilder?: boolean }).isRawBuilder === true;
}

/** Registers `text` under its family's name, unless the registry is full; the name it runs under, if any. */
function register(family: string, text: string): string | undefined {
  let name = namesByText.get(text);
  if (name === undefined && namesByText.size < MAX_PREPARED_TEXTS) {
    name = `${family}_${crypto.createHash('sha256').update(text).digest('base64url').slice(0, 16)}`;
    namesByText.set(text, name);
  }
  return name;
}

/** Runs `query` as a named prepared statement (through Kysely, so a transaction's connection is used as usual). */
export async function runPrepared<Row>(db: Executor, family: string, query: RawBuilder<Row> | Compilable<Row>): Promise<Row[]> {
  const compiled = isRawBuilder(query) ? query.compile(db) : query.compile();
  register(family, compiled.sql);
  return (await db.executeQuery<Row>(compiled)).rows;
}

/** The name `text` runs under, if it is registered (tests and diagnostics). */
export function preparedName(text: string): string | undefined {
  return namesByText.get(text);
}

type QueryFunction = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * pg's Client, except that a registered statement text sent with parameters (as Kysely sends
 * every query) goes out as that named statement; anything else is untouched.
 */
export class PreparingClient extends pg.Client {}
const plainQuery = pg.Client.prototype.query as unknown as QueryFunction;
(PreparingClient.prototype as unknown as { query: QueryFunction }).query = function query(this: pg.Client, config, values, callback) {
  if (typeof config === 'string' && Array.isArray(values)) {
    const name = namesByText.get(config);
    if (name !== undefined) return plainQuery.call(this, { name, text: config, values }, undefined, callback);
  }
  return plainQuery.call(this, config, values, callback);
};
