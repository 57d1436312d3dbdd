import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectHealthyEverywhere,
  isAlive,
  livePostmaster,
  makeDataDir,
  postmasterPid,
  removeDataDir,
  runCliJson,
  startServer,
  waitForPostgresStopped,
  type ServerProcess,
} from '../helpers/process.js';

/**
 * A hard-killed server leaves its postmaster running (pg_ctl daemonises it); the next start
 * must take that PostgreSQL over, and the admin CLI must manage it by itself when no
 * server runs.
 */

let dataDir: string;
let env: Record<string, string>;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  dataDir = makeDataDir();
  env = { ALMONER_DATA_DIR: dataDir };
});

afterAll(async () => {
  for (const server of servers) await server.kill();
  // Stops a postmaster orphaned by a failed assertion after the SIGKILL, then removes the directory.
  await removeDataDir(dataDir);
});

describe('embedded PostgreSQL after a crash', () => {
  it('a SIGKILLed server leaves its PostgreSQL running, and the next start takes it over and stops it', async () => {
    const first = await startServer({ env });
    servers.push(first);
    const pid = livePostmaster(dataDir);
    expect(pid, 'the server should have started an embedded postmaster').toBeDefined();

    const killed = await first.stop('SIGKILL', 10_000);
    expect(killed.signal).toBe('SIGKILL');
    // Nobody stopped the postmaster: it is still there, still holding the data directory.
    expect(postmasterPid(dataDir)).toBe(pid);
    expect(isAlive(pid!), 'the orphaned postmaster should still be running').toBe(true);

    const second = await startServer({ env });
    servers.push(second);
    await expectHealthyEverywhere(second);
    expect(livePostmaster(dataDir), 'the second start should reuse the orphaned postmaster').toBeDefined();

    const status = await second.stop('SIGTERM', 15_000);
    expect(status, second.output()).toEqual({ code: 0, signal: null });
    await waitForPostgresStopped(dataDir, 5_000);
    expect(isAlive(pid!)).toBe(false);
  }, 240_000);

  it('the admin CLI with no server running starts PostgreSQL for the command and stops it after', async () => {
    expect(livePostmaster(dataDir)).toBeUndefined();

    const org = await runCliJson(['orgs', 'add', '--ein', '55-7654321', '--name', 'Offline Org'], { env });
    expect(org).toMatchObject({ ein: '55-7654321', name: 'Offline Org', kind: 'nonprofit' });
    expect(livePostmaster(dataDir), 'the CLI must stop the PostgreSQL it started').toBeUndefined();

    // The row was committed: a second CLI run (starting PostgreSQL again) sees it.
    const { organizations } = (await runCliJson(['orgs', 'list'], { env })) as { organizations: { ein: string; name: string }[] };
    expect(organizations).toContainEqual(expect.objectContaining({ ein: '55-7654321', name: 'Offline Org' }));
    expect(livePostmaster(dataDir)).toBeUndefined();
  }, 240_000);

  it('the admin CLI initialises PostgreSQL in an empty data directory and stops it after', async () => {
    const fresh = makeDataDir();
    try {
      const freshEnv = { ...env, ALMONER_DATA_DIR: fresh };
      const org = await runCliJson(['orgs', 'add', '--ein', '55-7654322', '--name', 'Fresh Org'], { env: freshEnv });
      expect(org).toMatchObject({ ein: '55-7654322', name: 'Fresh Org', kind: 'nonprofit' });
      expect(postmasterPid(fresh) === undefined || !isAlive(postmasterPid(fresh)!), 'the CLI must stop the PostgreSQL it started').toBe(
        true,
      );
    } finally {
      await removeDataDir(fresh);
    }
  }, 240_000);
});
