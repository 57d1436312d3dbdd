import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { DATA_DIRS_FILE_ENV, registerDataDir, registeredDataDirs, stopPostmasterSync } from './leftover-postgres.js';
import { removeRelocatedPgdata } from './relocated-pgdata.js';
import { livePostmaster } from './process.js';

/**
 * An embedded PostgreSQL a test opened and never released (the test failed first) is stopped
 * by the clean-up of its directory, and the directory is in the run's list the global teardown
 * sweeps (test/global-setup.ts).
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) {
    removeRelocatedPgdata(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('an embedded PostgreSQL left running by a test', () => {
  it("is in the run's list, and stopping its directory's postmaster ends it without a release", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-leftover-'));
    fs.chmodSync(dir, 0o755);
    dirs.push(dir);
    registerDataDir(dir);
    const file = process.env[DATA_DIRS_FILE_ENV];
    expect(file, "the global setup names the run's list").toBeDefined();
    expect(registeredDataDirs(file!)).toContain(path.resolve(dir));

    // Opened and never released, as by a test that failed before its teardown.
    await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always', relocationRoot: path.join(dir, 'relocated') });
    const pid = livePostmaster(dir);
    expect(pid, 'a postmaster runs in the directory').toBeDefined();

    stopPostmasterSync(dir);
    expect(livePostmaster(dir)).toBeUndefined();
  }, 120_000);
});
