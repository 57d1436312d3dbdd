import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queryOnce as query } from '../helpers/database.js';
import { EmbeddedPostgresError, openEmbeddedPostgres, type EmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { registerDataDir } from '../helpers/leftover-postgres.js';
import { removeRelocatedPgdata } from '../helpers/relocated-pgdata.js';

/**
 * A data directory under a 0700 directory (a clone in root's home). As root the `postgres`
 * OS user, which runs PostgreSQL, cannot reach it: PGDATA is relocated under the
 * relocation root (here a temporary stand-in for /var/lib/almoner). For any other user the
 * embedded PostgreSQL runs as that user, so PGDATA stays in the data directory.
 */

const asRoot = process.getuid?.() === 0;
const made: string[] = [];
const privateParents: string[] = [];
const opened: EmbeddedPostgres[] = [];

/** A fresh directory anyone can traverse, removed after the file. */
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  made.push(dir);
  registerDataDir(dir);
  return dir;
}

/** Stands in for /var/lib/almoner, so the test leaves nothing there. */
const relocationRoot = tempDir('almoner-relocation-root-');

afterAll(async () => {
  for (const postgres of opened) await postgres.release();
  for (const parent of privateParents) {
    removeRelocatedPgdata(path.join(parent, 'data'));
    fs.rmSync(parent, { recursive: true, force: true });
  }
  for (const dir of made) {
    removeRelocatedPgdata(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** <a fresh 0700 directory>/data (not created). */
function privateDataDir(): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-private-'));
  fs.chmodSync(parent, 0o700);
  privateParents.push(parent);
  registerDataDir(path.join(parent, 'data'));
  return path.join(parent, 'data');
}

async function open(dataDir: string, root = relocationRoot): Promise<EmbeddedPostgres> {
  const postgres = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always', relocationRoot: root });
  opened.push(postgres);
  return postgres;
}

function recorded(dataDir: string): { pgdata?: string } {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'embedded-postgres.json'), 'utf8')) as { pgdata?: string };
}

function postgresUid(): number {
  return Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
}

describe('a data directory the "postgres" OS user cannot reach', () => {
  it('gets its PGDATA relocated and recorded as root, shared and found again after a restart (in place for other users)', async () => {
    const dataDir = privateDataDir();
    const first = await open(dataDir);
    const relocatedDir = path.join(
      relocationRoot,
      'clusters',
      crypto.createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16),
    );
    if (asRoot) {
      expect(first.pgdata).toBe(path.join(relocatedDir, 'pg'));
      expect(first.relocatedFrom).toBe(dataDir);
      expect(recorded(dataDir).pgdata).toBe(first.pgdata);
      expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
      const stat = fs.statSync(relocatedDir);
      expect({ owner: stat.uid, mode: stat.mode & 0o777 }).toEqual({ owner: postgresUid(), mode: 0o700 });
      expect(fs.readFileSync(path.join(relocatedDir, 'data-dir'), 'utf8')).toBe(`${fs.realpathSync(dataDir)}\n`);
    } else {
      expect(first.pgdata).toBe(path.join(dataDir, 'pg'));
      expect(first.relocatedFrom).toBeUndefined();
      expect(recorded(dataDir).pgdata).toBeUndefined();
      expect(fs.existsSync(relocatedDir)).toBe(false);
    }
    // Credentials stay in the data directory, private to its owner, wherever PGDATA is.
    expect(fs.statSync(path.join(dataDir, 'embedded-postgres.json')).mode & 0o077).toBe(0);
    await query(first.url, 'create table kept (v int); insert into kept values (7)');

    // A second process (the admin CLI, a second server) joins the same postmaster.
    const second = await open(dataDir);
    expect({ startedHere: second.startedHere, port: second.port, pgdata: second.pgdata }).toEqual({
      startedHere: false,
      port: first.port,
      pgdata: first.pgdata,
    });
    await second.release();
    await first.release();
    expect(fs.existsSync(path.join(first.pgdata, 'postmaster.pid'))).toBe(false);

    // A stale postmaster.pid at the relocated PGDATA is recognised as such.
    const impostor = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(path.join(first.pgdata, 'postmaster.pid'), `${impostor.pid}\n${first.pgdata}\n0\n${first.port}\n\n127.0.0.1\n`);
      const restarted = await open(dataDir);
      expect({ startedHere: restarted.startedHere, pgdata: restarted.pgdata }).toEqual({ startedHere: true, pgdata: first.pgdata });
      expect(await query(restarted.url, 'select v from kept')).toEqual([{ v: 7 }]);
      await restarted.release();
    } finally {
      impostor.kill('SIGKILL');
    }
  });

  it('with the credentials file gone, names the relocated PGDATA to remove (as root) or the data directory', async () => {
    const dataDir = privateDataDir();
    const postgres = await open(dataDir);
    await postgres.release();
    fs.rmSync(path.join(dataDir, 'embedded-postgres.json'));
    const failure = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always', relocationRoot }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(EmbeddedPostgresError);
    if (asRoot) expect(failure?.message).toContain(`remove the cluster left in ${path.dirname(postgres.pgdata)} (rm -r) to start afresh`);
    else expect(failure?.message).toContain('move the data directory aside to start afresh');
  });

  it('fails at once with one line naming the fix when PGDATA cannot be relocated either (as root; in place otherwise)', async () => {
    const dataDir = privateDataDir();
    // A relocation root that cannot be created: a path under a regular file.
    const blocker = path.join(tempDir('almoner-blocked-'), 'a-file');
    fs.writeFileSync(blocker, '');
    const impossibleRoot = path.join(blocker, 'almoner');
    const opening = openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always', relocationRoot: impossibleRoot });
    if (!asRoot) {
      const postgres = await opening;
      opened.push(postgres);
      expect(postgres.pgdata).toBe(path.join(dataDir, 'pg'));
      return;
    }
    const failure = await opening.then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(EmbeddedPostgresError);
    const message = failure!.message;
    expect(message).not.toContain('\n');
    expect(message).toContain(`the data directory ${dataDir} is not reachable by the "postgres" OS user`);
    expect(message).toContain(`could not be placed in ${impossibleRoot}/clusters/`);
    expect(message).toContain('set ALMONER_DATA_DIR to a directory whose parent directories are world-traversable');
    expect(message).toContain('or set DATABASE_URL');
    // Decided before any tool ran: nothing was initialised anywhere.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});

describe('binaries the "postgres" OS user cannot reach', () => {
  // Copies the 60 MB package twice and initialises a cluster: its time limit, a hang guard, leaves room for a loaded host.
  it('are copied once under the relocation root as root (and run in place for other users)', async () => {
    const real = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string };
    const packageDir = path.dirname(path.dirname(path.dirname(real.postgres)));
    const { name, version } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    // The package as a clone in a 0700 home would hold it.
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-private-bin-'));
    privateParents.push(parent);
    fs.chmodSync(parent, 0o700);
    const copy = path.join(parent, 'package');
    fs.mkdirSync(copy);
    fs.copyFileSync(path.join(packageDir, 'package.json'), path.join(copy, 'package.json'));
    fs.cpSync(path.join(packageDir, 'native'), path.join(copy, 'native'), { recursive: true, verbatimSymlinks: true });
    const binaries = {
      initdb: path.join(copy, 'native/bin/initdb'),
      pg_ctl: path.join(copy, 'native/bin/pg_ctl'),
      postgres: path.join(copy, 'native/bin/postgres'),
    };

    const postgres = await openEmbeddedPostgres({
      dataDir: tempDir('almoner-postgres-'),
      stopWhenUnused: 'always',
      relocationRoot,
      binaries,
    });
    opened.push(postgres);
    const pid = Number(fs.readFileSync(path.join(postgres.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const running = fs.readlinkSync(`/proc/${pid}/exe`);
    const expected = asRoot
      ? path.join(relocationRoot, 'postgres', `${name.replace('@embedded-postgres/', '')}-${version}`, 'bin', 'postgres')
      : binaries.postgres;
    expect(running).toBe(expected);
    expect(await query(postgres.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    await postgres.release();
  }, 120_000);
});
