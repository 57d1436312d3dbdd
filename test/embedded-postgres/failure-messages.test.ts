import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgresError, embeddedPgdata, openEmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { registerDataDir, stopPostmasterSync } from '../helpers/leftover-postgres.js';

/**
 * When initdb or pg_ctl fails, the error says what the tool said (its stderr; else its stdout
 * and how it ended), never an empty reason. initdb's failures are produced by stand-in
 * scripts run exactly as the real initdb would be; pg_ctl's by a real PostgreSQL whose
 * configuration is broken.
 */

const made: string[] = [];
afterAll(() => {
  for (const dir of made) {
    stopPostmasterSync(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh directory the `postgres` OS user can traverse too, removed after the file. */
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  made.push(dir);
  registerDataDir(dir);
  return dir;
}

/** A bin/ directory whose initdb is `script` (mode `mode`); pg_ctl and postgres are never reached. */
function binariesWithInitdb(script: string, mode = 0o755) {
  const dir = tempDir('almoner-fake-pg-');
  fs.mkdirSync(path.join(dir, 'bin'), { mode: 0o755 });
  const write = (name: string, body: string, fileMode: number) => {
    fs.writeFileSync(path.join(dir, 'bin', name), `#!/bin/sh\n${body}\n`);
    fs.chmodSync(path.join(dir, 'bin', name), fileMode);
  };
  write('initdb', script, mode);
  write('pg_ctl', 'exit 0', 0o755);
  write('postgres', 'exit 0', 0o755);
  return { initdb: path.join(dir, 'bin', 'initdb'), pg_ctl: path.join(dir, 'bin', 'pg_ctl'), postgres: path.join(dir, 'bin', 'postgres') };
}

async function failureOf(binaries: ReturnType<typeof binariesWithInitdb>): Promise<string> {
  const dataDir = tempDir('almoner-postgres-');
  const error = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always', binaries }).then(
    () => undefined,
    (caught: Error) => caught,
  );
  expect(error).toBeInstanceOf(EmbeddedPostgresError);
  // Nothing half-made is left behind: no PGDATA, no credentials, no password file.
  expect(fs.readdirSync(dataDir)).toEqual([]);
  return error!.message;
}

describe('embedded PostgreSQL failure messages', () => {
  it("carry initdb's stderr and exit code", async () => {
    const message = await failureOf(
      binariesWithInitdb(
        'echo "initdb: warning: first line" >&2\necho "initdb: error: could not create directory: No space left on device" >&2\nexit 1',
      ),
    );
    expect(message).toBe(
      'initdb failed (exit code 1): initdb: warning: first line | initdb: error: could not create directory: No space left on device',
    );
  });

  it("carry initdb's stdout and exit code when its stderr is empty", async () => {
    const message = await failureOf(
      binariesWithInitdb('echo "the files belonging to this database system"\necho "fixing permissions ... failed"\nexit 3'),
    );
    expect(message).toBe(
      'initdb failed (exit code 3), printing nothing on stderr; stdout: the files belonging to this database system | fixing permissions ... failed',
    );
  });

  it('name the signal that killed initdb when it printed nothing', async () => {
    const message = await failureOf(binariesWithInitdb('kill -TERM $$'));
    expect(message).toBe('initdb was killed by SIGTERM, printing nothing');
  });

  it('say why initdb could not be run at all', async () => {
    const binaries = binariesWithInitdb('exit 0', 0o644);
    const message = await failureOf(binaries);
    expect(message).toContain(`initdb could not be run (spawn ${binaries.initdb} EACCES)`);
    expect(message).toContain('cannot execute it or reach its directory');
  });

  it("carry pg_ctl's stderr and the end of the server log when PostgreSQL does not start", async () => {
    const dataDir = tempDir('almoner-postgres-');
    const postgres = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always' });
    await postgres.release();
    fs.appendFileSync(path.join(embeddedPgdata(dataDir), 'postgresql.conf'), '\nthis line is not a setting\n');
    const error = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always' }).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error).toBeInstanceOf(EmbeddedPostgresError);
    expect(error!.message).toContain(
      'the embedded PostgreSQL did not start: pg_ctl failed (exit code 1): pg_ctl: could not start server | Examine the log output.',
    );
    expect(error!.message).toMatch(/its log \(.*startup\.log\) ends: .*syntax error in file ".*postgresql\.conf" line \d+/);
    expect(error!.message).not.toContain('\n');
  });
});
