import pg from 'pg';
import type { AppConfig } from '../config/schema.js';
import { openEmbeddedPostgres, type OpenOptions } from '../embedded-postgres/server.js';

export interface DatabaseLocation {
  url: string;
  /** Human description for banners and logs; never contains a password. */
  description: string;
  embedded: boolean;
  release(): Promise<void>;
}

/**
 * DATABASE_URL names a database that does not answer (refused, unknown host, timeout, password
 * refused): an operator's fix, said in one line with the host and port, never a stack.
 */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

/** How long the first connection to DATABASE_URL may take at start before it is reported unreachable. */
const CONNECT_DEADLINE_MS = 10_000;

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable database URL)';
  }
}

/** host:port of a connection URL (PostgreSQL's default port when it names none); never the credentials. */
function hostAndPort(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
  } catch {
    return '(unparseable database URL)';
  }
}

/**
 * 3D000: the server answers but has no such database. Almoner creates its tables, not the
 * database, so the line says how to make it (a database name PostgreSQL defaults to the user's).
 */
function createHint(url: string): string {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username);
  const word = (text: string) => (/^[\w.-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
  const user = parsed.username ? ` -U ${word(decodeURIComponent(parsed.username))}` : '';
  return `; create it first: createdb -h ${parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost'} -p ${parsed.port || '5432'}${user} ${word(name)}`;
}

/** One connection to `url` within the deadline; DatabaseUnreachableError naming host:port and pg's reason when it fails. */
async function checkReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_DEADLINE_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const { message, code } = error as { message?: string; code?: string };
    const reason = message || code || String(error);
    throw new DatabaseUnreachableError(
      `cannot connect to the database at ${hostAndPort(url)} (DATABASE_URL): ${reason}${code === '3D000' ? createHint(url) : ''}`,
      { cause: error },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * DATABASE_URL when set (checked to answer, so a wrong one is named as such, not as a failed
 * migration); otherwise the embedded PostgreSQL of the data directory (src/embedded-postgres/),
 * whose start `signal` interrupts (see OpenOptions.signal).
 */
export async function resolveDatabase(
  config: Pick<AppConfig, 'database_url' | 'data_dir'>,
  stopWhenUnused: OpenOptions['stopWhenUnused'],
  log?: (message: string) => void,
  signal?: AbortSignal,
): Promise<DatabaseLocation> {
  if (config.database_url) {
    await checkReachable(config.database_url);
    return { url: config.database_url, description: redactUrl(config.database_url), embedded: false, release: async () => undefined };
  }
  const embedded = await openEmbeddedPostgres({ dataDir: config.data_dir, stopWhenUnused, log, signal });
  return {
    url: embedded.url,
    description: embedded.relocatedFrom
      ? `embedded PostgreSQL 17 on 127.0.0.1:${embedded.port} (data in ${embedded.pgdata}, outside ${embedded.relocatedFrom}, which the "postgres" OS user cannot reach)`
      : `embedded PostgreSQL 17 on 127.0.0.1:${embedded.port} (data in ${embedded.pgdata})`,
    embedded: true,
    release: () => embedded.release(),
  };
}
