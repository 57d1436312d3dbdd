import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedPgdata } from '../../src/embedded-postgres/location.js';
import {
  livePostmaster,
  removeDataDir,
  runCliJson,
  startServer,
  waitForPostgresStopped,
  waitUntil,
  type ServerProcess,
} from '../helpers/process.js';

/**
 * `npm start` with the data directory under a 0700 directory, as a clone in root's home has
 * it. As root the `postgres` OS user cannot reach it, so PGDATA lives under
 * /var/lib/almoner/clusters/ and the banner says so; for any other user PostgreSQL runs as
 * that user and stays in the data directory. Either way a restart and the admin CLI find it.
 */

const asRoot = process.getuid?.() === 0;
let parent: string;
let dataDir: string;
let env: Record<string, string>;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-home-'));
  fs.chmodSync(parent, 0o700);
  dataDir = path.join(parent, 'data');
  env = { ALMONER_DATA_DIR: dataDir };
});

afterAll(async () => {
  for (const server of servers) await server.kill();
  // Also removes the relocated PGDATA under /var/lib/almoner (test/helpers/relocated-pgdata.ts).
  await removeDataDir(dataDir);
  fs.rmSync(parent, { recursive: true, force: true });
});

/** The banner's Database line, once printed. */
async function databaseLine(server: ServerProcess): Promise<string> {
  await waitUntil('the dev banner', () => /^\s*Database\s.*$/m.test(server.stdout), 10_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${server.output()}`);
  });
  return /^\s*Database\s.*$/m.exec(server.stdout)![0];
}

describe('a data directory under a 0700 directory', () => {
  let pgdata: string;

  it('starts, with PGDATA where the "postgres" OS user can reach it, named in the banner, and shares it with the admin CLI', async () => {
    const server = await startServer({ env });
    servers.push(server);
    const line = await databaseLine(server);

    pgdata = embeddedPgdata(dataDir);
    if (asRoot) {
      expect(pgdata).toMatch(/^\/var\/lib\/almoner\/clusters\/[0-9a-f]{16}\/pg$/);
      expect(line, server.output()).toContain(`(data in ${pgdata}, outside ${dataDir}, which the "postgres" OS user cannot reach)`);
      expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
    } else {
      expect(pgdata).toBe(path.join(dataDir, 'pg'));
      expect(line, server.output()).toContain(`(data in ${pgdata})`);
    }
    // Credentials and keys stay in the data directory.
    expect(fs.existsSync(path.join(dataDir, 'embedded-postgres.json'))).toBe(true);

    const pid = livePostmaster(dataDir);
    expect(pid, 'the server should have started an embedded postmaster').toBeDefined();
    const org = await runCliJson(['orgs', 'add', '--ein', '55-0700700', '--name', 'Private Home Org'], { env });
    expect(org).toMatchObject({ ein: '55-0700700', name: 'Private Home Org' });
    expect(livePostmaster(dataDir), 'the CLI joined the running PostgreSQL and left it running').toBe(pid);

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    await waitForPostgresStopped(dataDir, 5_000);
  }, 120_000);

  it('starts again on the same PostgreSQL and data, and the admin CLI alone finds it too', async () => {
    expect(pgdata, 'the first test must have run').toBeDefined();
    // The admin CLI with no server running: starts PostgreSQL on the recorded PGDATA for the command, stops it after.
    const offline = (await runCliJson(['orgs', 'list'], { env })) as { organizations: { ein: string }[] };
    expect(offline.organizations.map((o) => o.ein)).toContain('55-0700700');
    expect(livePostmaster(dataDir)).toBeUndefined();

    const server = await startServer({ env });
    servers.push(server);
    expect(await databaseLine(server), server.output()).toContain(`(data in ${pgdata}`);
    expect(embeddedPgdata(dataDir)).toBe(pgdata);
    const online = (await runCliJson(['orgs', 'list'], { env })) as { organizations: { ein: string }[] };
    expect(online.organizations.map((o) => o.ein)).toContain('55-0700700');

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    await waitForPostgresStopped(dataDir, 5_000);
  }, 120_000);
});
