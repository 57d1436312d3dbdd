import fs from 'node:fs';
import path from 'node:path';
import { embeddedPgdata } from '../../src/embedded-postgres/location.js';

/**
 * An embedded PostgreSQL is a daemon (pg_ctl start): it outlives the test worker that started
 * it. A test that fails between opening one and releasing it, or a worker that dies, would
 * leave it running, holding memory and a port, after its data directory is gone. So every
 * directory a test may start one in is stopped before removal (stopPostmasterSync), and is
 * also recorded in the run's list (registerDataDir), which the global teardown sweeps.
 */

/**
 * Environment variable naming the run's list of data directories (set by test/global-setup.ts).
 * Not ALMONER_*: the dev profile refuses an ALMONER_* variable it does not know, and this one
 * reaches the processes the tests start.
 */
export const DATA_DIRS_FILE_ENV = 'TEST_RUN_ALMONER_DATA_DIRS';

function postmasterPidIn(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(embeddedPgdata(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A live (not zombie) process whose command line is a postgres: a reused pid is left alone. */
function isLivePostgres(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X' && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return false;
  }
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Stops a postmaster left running in `dataDir`'s PGDATA (synchronous: also used from exit
 * hooks): SIGQUIT, PostgreSQL's immediate shutdown (what `pg_ctl stop -m immediate` sends),
 * then SIGKILL if it is still there after 10 s. Root may signal the `postgres` user's process.
 */
export function stopPostmasterSync(dataDir: string): void {
  const pid = postmasterPidIn(dataDir);
  if (pid === undefined || !isLivePostgres(pid)) return;
  try {
    process.kill(pid, 'SIGQUIT');
  } catch {
    return; // gone meanwhile
  }
  for (let waited = 0; waited < 10_000 && isLivePostgres(pid); waited += 50) pause(50);
  if (isLivePostgres(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Records `dir` in the run's list, so the global teardown stops what a failed test left there. */
export function registerDataDir(dir: string): void {
  const file = process.env[DATA_DIRS_FILE_ENV];
  if (!file) return;
  try {
    fs.appendFileSync(file, `${path.resolve(dir)}\n`);
  } catch {
    // the run's list is gone (its teardown ran): nothing to record into
  }
}

/** The run's recorded directories (global teardown). */
export function registeredDataDirs(file: string): string[] {
  try {
    return [
      ...new Set(
        fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line !== ''),
      ),
    ];
  } catch {
    return [];
  }
}
