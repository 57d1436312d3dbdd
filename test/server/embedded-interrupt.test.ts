import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { livePostmaster, makeDataDir, removeDataDir, spawnServer, startServer, waitUntil, type ServerProcess } from '../helpers/process.js';

/**
 * Ctrl-C (SIGINT) or SIGTERM at each stage of the first start in the dev profile, without
 * DATABASE_URL: the server says it is shutting down, exits 0, leaves no PostgreSQL process
 * behind for its data directory (initdb included) and no half-made files, so the next start
 * initialises afresh (docs/operations.md, "Starting and stopping").
 */

const dataDirs: string[] = [];
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.kill();
  for (const dir of dataDirs) await removeDataDir(dir);
});

function freshDataDir(): string {
  const dir = makeDataDir();
  dataDirs.push(dir);
  return dir;
}

function spawnFirstStart(dataDir: string): ServerProcess {
  // info: the stages are told apart by the log lines, and "shutting down" is logged at info.
  const server = spawnServer({ env: { ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
  servers.push(server);
  return server;
}

/** Pids of live processes whose command line names `dir` (a postmaster's -D, initdb's staging directory). */
function processesUsing(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(dir) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** What an unfinished initialisation would leave: a staging PGDATA, a password file, a credentials file being written. */
function leftovers(dataDir: string): string[] {
  return fs
    .readdirSync(dataDir)
    .filter((name) => /^pg\.init-/.test(name) || /^\.pwfile-/.test(name) || /^embedded-postgres\.json\./.test(name));
}

async function interruptWhen(server: ServerProcess, stage: string, reached: () => boolean, signal: NodeJS.Signals): Promise<void> {
  await waitUntil(`stage "${stage}"`, () => reached() || !server.running, 60_000, 5).catch((error: Error) => {
    throw new Error(`${error.message}\n${server.output()}`);
  });
  expect(server.running, `the server ended before stage "${stage}"\n${server.output()}`).toBe(true);
  server.child.kill(signal);
}

async function expectCleanStop(server: ServerProcess, dataDir: string, stage: string): Promise<void> {
  const status = await server.waitExit(60_000, `of the interrupt at stage "${stage}"`);
  const context = `stage "${stage}"\n${server.output()}`;
  expect(status, context).toEqual({ code: 0, signal: null });
  expect(server.stdout, context).toMatch(/INFO: shutting down/);
  expect(server.stdout, context).toMatch(/INFO: stopped/);
  // pg_ctl stop -w has waited for the postmaster; its children may take a moment more.
  await waitUntil(`no process using ${dataDir}`, () => processesUsing(dataDir).length === 0, 10_000).catch(() => undefined);
  expect(processesUsing(dataDir), context).toEqual([]);
  expect(livePostmaster(dataDir), context).toBeUndefined();
  expect(leftovers(dataDir), context).toEqual([]);
  // PGDATA is there whole (with its credentials) or not at all.
  const pgdata = path.join(dataDir, 'pg');
  if (fs.existsSync(pgdata)) {
    expect(fs.existsSync(path.join(pgdata, 'PG_VERSION')), context).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'embedded-postgres.json')), context).toBe(true);
  }
}

describe('an interrupted first start with the embedded PostgreSQL', () => {
  it('SIGINT during initdb: stops initdb, removes its staging directory and password file; the next start initialises again', async () => {
    const dataDir = freshDataDir();
    const server = spawnFirstStart(dataDir);
    await interruptWhen(server, 'initdb', () => fs.readdirSync(dataDir).some((name) => name.startsWith('pg.init-')), 'SIGINT');
    await expectCleanStop(server, dataDir, 'initdb');
    expect(fs.existsSync(path.join(dataDir, 'pg')), server.output()).toBe(false);

    const next = await startServer({ env: { ALMONER_DATA_DIR: dataDir } });
    servers.push(next);
    expect(livePostmaster(dataDir), next.output()).toBeDefined();
    expect((await next.stop('SIGTERM', 30_000)).code, next.output()).toBe(0);
    expect(livePostmaster(dataDir), next.output()).toBeUndefined();
  }, 120_000);

  it('SIGTERM during initdb does the same', async () => {
    const dataDir = freshDataDir();
    const server = spawnFirstStart(dataDir);
    await interruptWhen(server, 'initdb', () => fs.readdirSync(dataDir).some((name) => name.startsWith('pg.init-')), 'SIGTERM');
    await expectCleanStop(server, dataDir, 'initdb (SIGTERM)');
  }, 120_000);

  const later: [stage: string, reached: (server: ServerProcess, dataDir: string) => boolean][] = [
    ['PostgreSQL starting', (_server, dataDir) => fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))],
    ['migrations', (server) => server.stdout.includes('embedded PostgreSQL started on')],
    ['demo data and key generation', (server) => server.stdout.includes('migrations applied')],
    ['listening', (server) => fs.existsSync(server.readyFile)],
  ];
  it.each(later)(
    'SIGINT at stage "%s": stops the PostgreSQL it started and leaves a whole PGDATA',
    async (stage, reached) => {
      const dataDir = freshDataDir();
      const server = spawnFirstStart(dataDir);
      await interruptWhen(server, stage, () => reached(server, dataDir), 'SIGINT');
      await expectCleanStop(server, dataDir, stage);
    },
    120_000,
  );
});
