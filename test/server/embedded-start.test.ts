import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allUrls,
  E2E_ORG,
  exerciseAdminCommands,
  expectHealthyEverywhere,
  livePostmaster,
  makeDataDir,
  removeDataDir,
  runCliJson,
  startServer,
  waitForPostgresStopped,
  waitUntil,
  type ServerProcess,
} from '../helpers/process.js';

/**
 * `npm start` in the dev profile with no DATABASE_URL: the embedded PostgreSQL in the data
 * directory, the admin CLI sharing it while the server runs, a clean SIGTERM, and a second
 * start that finds the first one's data without seeding again.
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
  await removeDataDir(dataDir);
});

describe('dev profile with the embedded PostgreSQL', () => {
  it('starts, serves all four hosts, shares its PostgreSQL with the admin CLI and stops cleanly', async () => {
    const server = await startServer({ env });
    servers.push(server);

    await expectHealthyEverywhere(server);

    // The banner: the four URLs and the demo users.
    await waitUntil('the dev banner', () => server.stdout.includes('readonly@example.org'), 10_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${server.output()}`);
    });
    for (const url of allUrls(server.urls)) expect(server.stdout, server.output()).toContain(url);
    for (const email of ['owner@example.org', 'admin@example.org', 'member@example.org', 'readonly@example.org']) {
      expect(server.stdout, server.output()).toContain(email);
    }
    expect(server.stdout).toContain('12-3456789');

    const pid = livePostmaster(dataDir);
    expect(pid, 'the server should have started an embedded postmaster').toBeDefined();

    await exerciseAdminCommands(env);
    // Changes a demo membership, so a second seeding (which would restore it) is visible.
    const removedDemo = await runCliJson(['members', 'remove', '--org', '12-3456789', '--email', 'readonly@example.org'], { env });
    expect(removedDemo).toMatchObject({ org: '12-3456789', email: 'readonly@example.org' });

    // The CLI joined the server's PostgreSQL and left it running.
    expect(livePostmaster(dataDir), 'the CLI must not stop the PostgreSQL of a running server').toBe(pid);
    await expectHealthyEverywhere(server);
    expect(server.running).toBe(true);

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    // The server stopped the PostgreSQL it started.
    await waitForPostgresStopped(dataDir, 5_000);
  }, 240_000);

  it('starts again on the same data directory, keeping the data and not seeding twice', async () => {
    expect(livePostmaster(dataDir)).toBeUndefined();
    const server = await startServer({ env });
    servers.push(server);
    await expectHealthyEverywhere(server);

    const { organizations } = (await runCliJson(['orgs', 'list'], { env })) as {
      organizations: { ein: string; name: string; kind: string }[];
    };
    expect(organizations.filter((o) => o.ein === E2E_ORG.ein)).toEqual([
      expect.objectContaining({ ein: '55-1234567', name: 'E2E Org', kind: 'nonprofit' }),
    ]);
    expect(organizations.filter((o) => o.name === 'Demo Food Bank')).toEqual([
      expect.objectContaining({ ein: '12-3456789', kind: 'nonprofit' }),
    ]);
    expect(organizations.filter((o) => o.ein === '12-3456789')).toHaveLength(1);

    // The demo membership removed before the restart stays removed: seeding ran once only.
    const { members } = (await runCliJson(['members', 'list', '--org', '12-3456789'], { env })) as {
      members: { email: string; role: string }[];
    };
    expect(members.map((m) => m.email).sort()).toEqual(['admin@example.org', 'member@example.org', 'owner@example.org']);

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    await waitForPostgresStopped(dataDir, 5_000);
  }, 240_000);
});
