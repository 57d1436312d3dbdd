import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PreparingClient } from './prepared-statements.js';
import { almonerTypes } from './timestamp-parser.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseOptions {
  url: string;
  poolMax?: number;
  statementTimeoutMs?: number;
  applicationName?: string;
  onPoolError?: (error: Error) => void;
}

const pools = new WeakMap<Db, pg.Pool>();

/** The one way the server, the CLI and the tests talk to Postgres: Kysely over a pg pool. */
export function createDatabase(options: DatabaseOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    // Fail fast during an outage instead of queueing requests behind a dead server.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs || undefined,
    application_name: options.applicationName ?? 'almoner',
    // Registered hot-path statements run as named prepared statements (prepared-statements.ts).
    Client: PreparingClient,
    types: almonerTypes,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', (error) => options.onPoolError?.(error));
  // Nor one in use: pg-pool listens only while a client is idle, and a connection ended in the
  // middle of a transaction (pg_terminate_backend, a failover) is also announced as the client's
  // 'error', after its query has failed or before its next one fails; that failure is what the
  // request answers (503, docs/operations.md) and logs, so the announcement itself is dropped.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pg pool behind a Db made by createDatabase, for its connection gauges (see src/metrics). */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

/** The cheapest round trip to the database (readiness). */
export function pingDatabase(db: Db): Promise<unknown> {
  return sql`select 1`.execute(db);
}

/** Errors that mean "the database is unreachable right now", as opposed to a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (cause && cause !== error && isDatabaseUnavailable(cause)) return true;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
    // A reset or broken pipe is the database's only when a socket's system call raised it, as
    // pg's are: Node's "aborted" (ECONNRESET, no syscall) is an HTTP caller hanging up while
    // its request was read (docs/operations.md, "HTTP conventions").
    if ((code === 'ECONNRESET' || code === 'EPIPE') && typeof (error as { syscall?: unknown }).syscall === 'string') return true;
    // 08xxx connection exceptions, 57P0x operator intervention (shutdown), 53300 too many connections.
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)
  );
}

/**
 * Errors Postgres raises for input it cannot even represent (a NUL byte in text or, 22P05,
 * \u0000 in jsonb; a malformed uuid or timestamp): the request was bad, not the server. The
 * JSON body parser refuses U+0000 before it gets this far; this is the backstop.
 */
export function isUnrepresentableInput(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '22021' || code === '22P05' || code === '22P02' || code === '22007' || code === '22008' || code === '54000';
}
