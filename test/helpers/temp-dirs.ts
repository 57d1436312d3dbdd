import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerDataDir } from './leftover-postgres.js';
import { removeRelocatedPgdata } from './relocated-pgdata.js';

// Apart from test/helpers/app.ts (which re-exports it) so that test/per-file-setup.ts, which runs
// before every file, does not load the whole server: a file that needs no app starts in a second.

const created: string[] = [];

/**
 * Removes the directories tempDir made for the test file. test/per-file-setup.ts registers it
 * before the file's own hooks, so it runs after them (vitest runs afterAll hooks last-registered
 * first): an embedded PostgreSQL in one of these directories has been stopped by then.
 */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) {
    removeRelocatedPgdata(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A temporary directory the embedded Postgres user could traverse too; removed after the test file. */
export function tempDir(prefix = 'almoner-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  created.push(dir);
  registerDataDir(dir);
  return dir;
}
