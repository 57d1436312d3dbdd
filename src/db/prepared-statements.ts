import crypto from 'node:crypto';
import { CompiledQuery, createQueryId, RawNode, ValueNode, type Compilable, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { Executor } from './executor.js';

/**
 * Named prepared statements for the queries every API call or sign-in runs. PostgreSQL parses and plans an unnamed statement on every execution; the
 * credential lookup's join spends more time being planned (about 0.2 ms) than executed. A
 * prepared statement is parsed once per pooled connection and its plan reused (generic once
 * PostgreSQL finds it no worse).
 *
 * One registry, two ways in, both through Kysely (so a transaction's connection is used as
 * usual) and both sent named by PreparingClient below:
 *  - `runPrepared(db, family, query)` with any Kysely query, a builder or `sql`, compiled on
 *    each call;
 *  - `runNamed(db, text, values)` with a text built once (`preparedText` of `piece`s, or per
 *    shape with `PreparedShapes`) and its values in placeholder order: no compile and no hash
 *    of the text per call, for the statements of every token request
 *    (oidc/unit-of-work-repository.ts).
 * A text is registered under `<family>_<hash of the text>` the first time it is seen, so
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

/** A statement text with $1, $2, … placeholders, built and registered once (preparedText); run it with runNamed. */
export interface PreparedText {
  /** The name it runs under; none when the registry was full. */
  readonly name: string | undefined;
  readonly text: string;
  /** The text between its placeholders, as a template literal's strings (for Kysely plugins). */
  readonly fragments: readonly string[];
}

/** A piece of a statement's text with parameters (`piece`); a plain string is a piece without. */
export interface TextPiece {
  readonly strings: readonly string[];
}

/** A piece of text whose every `${…}` is the next parameter, $1, $2, … (what it interpolates only names the value). */
export function piece(strings: TemplateStringsArray, ..._names: string[]): TextPiece {
  return { strings };
}

/** Registers the text these pieces make, in order, under its family's name. */
export function preparedText(family: string, pieces: readonly (TextPiece | string)[]): PreparedText {
  const fragments: string[] = [];
  let open = '';
  for (const part of pieces) {
    const [first = '', ...rest] = typeof part === 'string' ? [part] : part.strings;
    open += first;
    for (const fragment of rest) {
      fragments.push(open);
      open = fragment;
    }
  }
  fragments.push(open);
  const text = fragments.reduce((text, fragment, i) => `${text}$${i}${fragment}`);
  return { name: register(family, text), text, fragments };
}

/** How many shapes of one statement PreparedShapes keeps. */
export const MAX_SHAPES = 64;

/**
 * One statement's texts by shape (a key naming what its text varies with: how many rows, which
 * parts), each built and registered once. Bounded as the registry is: past MAX_SHAPES, a new
 * shape's text is built on each call.
 */
export class PreparedShapes {
  private readonly texts = new Map<string, PreparedText>();

  constructor(private readonly family: string) {}

  text(shape: string, build: () => readonly (TextPiece | string)[]): PreparedText {
    let text = this.texts.get(shape);
    if (text === undefined) {
      text = preparedText(this.family, build());
      if (this.texts.size < MAX_SHAPES) this.texts.set(shape, text);
    }
    return text;
  }

  get size(): number {
    return this.texts.size;
  }
}

/**
 * Runs a prepared text with its values, in placeholder order, through Kysely, so a
 * transaction's connection is used as usual. pg gets the values as they are (as from a `sql`
 * template): it serialises Dates and objects itself. The text is the very string registered,
 * so PreparingClient's lookup of it costs no hashing of its characters (V8 keeps a string's
 * hash) and finds it at once. With plugins installed (the tests' statement probe), the
 * statement is compiled as any Kysely query is, so that they see it; the text is the same.
 */
export async function runNamed<Row>(db: Executor, text: PreparedText, values: unknown[]): Promise<Row[]> {
  const executor = db.getExecutor();
  let compiled: CompiledQuery;
  if (executor.plugins.length === 0) compiled = CompiledQuery.raw(text.text, values);
  else {
    const queryId = createQueryId();
    const node = RawNode.create(
      text.fragments,
      values.map((value) => ValueNode.create(value)),
    );
    compiled = executor.compileQuery(executor.transformQuery(node, queryId), queryId);
  }
  return (await executor.executeQuery<Row>(compiled)).rows;
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
