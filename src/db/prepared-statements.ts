import crypto from 'node:crypto';
import { CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import pg from 'pg';

/**
 * Named prepared statements for the queries every API call runs. PostgreSQL parses and plans
 * an unnamed statement on every execution; the credential lookup's five-table join spends
 * more time being planned (about 0.2 ms) than executed. A registered statement is parsed once
 * per pooled connection and its plan reused (generic once PostgreSQL finds it no worse).
 *
 * Registered texts list their columns: a `select *` cached plan would fail with "cached
 * plan must not change result type" after another process's migration adds a column.
 */
const namesByText = new Map<string, string>();
const textsByName = new Map<string, string>();

/** A statement run as a named prepared statement on the connections of a createDatabase pool. */
export interface PreparedStatement<Row> {
  readonly name: string;
  readonly text: string;
  /** Carries the row type only. */
  readonly row?: Row;
}

export function preparedStatement<Row>(name: string, text: string): PreparedStatement<Row> {
  const known = textsByName.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} is registered with another text`);
  textsByName.set(name, text);
  namesByText.set(text, name);
  return { name, text };
}

/** Runs a registered statement through Kysely (so a transaction's connection is used as usual). */
export async function runPrepared<DB, Row>(db: Kysely<DB>, statement: PreparedStatement<Row>, parameters: readonly unknown[]): Promise<Row[]> {
  const result = await db.executeQuery<Row>(CompiledQuery.raw(statement.text, [...parameters]));
  return result.rows;
}

const registeredShapes = new Set<string>();

/**
 * Runs a statement built with parameters as a named prepared statement, registered on first
 * use under `<family>_<hash of its text>`: for joins and CTEs whose planning costs PostgreSQL
 * more than running them, and whose texts come in a handful of shapes (the parameters differ,
 * not the text).
 */
export async function runShaped<DB, Row>(db: Kysely<DB>, family: string, query: RawBuilder<Row>): Promise<Row[]> {
  const compiled = query.compile(db);
  if (!registeredShapes.has(compiled.sql)) {
    preparedStatement(`${family}_${crypto.createHash('sha256').update(compiled.sql).digest('base64url').slice(0, 16)}`, compiled.sql);
    registeredShapes.add(compiled.sql);
  }
  return (await db.executeQuery<Row>(compiled)).rows;
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
