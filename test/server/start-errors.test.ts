import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { embeddedPgdata } from '../../src/embedded-postgres/location.js';
import { ephemeralUrlEnv, makeDataDir, removeDataDir, spawnServer, waitUntil, withScheme, type ServerProcess } from '../helpers/process.js';

/**
 * Start failures that point at the fix (docs/operations.md, "Starting and stopping"): an
 * unreachable DATABASE_URL named with its host and port, a database that does not exist with
 * the createdb that makes it, a port already in use and an invalid clients file in one line
 * without a stack (every busy port named at once, before anything starts), a mistyped
 * ALMONER_* variable with the setting it probably meant.
 */

let t: TestDatabase;
let dataDir: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
});

afterEach(async () => {
  await server?.kill();
  server = undefined;
});

afterAll(async () => {
  await removeDataDir(dataDir);
  await t?.drop();
});

/** The production profile's settings, behind a TLS-terminating proxy (plain HTTP on loopback). */
function productionEnv(): Record<string, string> {
  return {
    ...ephemeralUrlEnv('https'),
    ALMONER_PROFILE: 'production',
    DATABASE_URL: t.url,
    ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
    ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
    ALMONER_DATA_DIR: dataDir,
    ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
  };
}

/**
 * The start stopped with exit 1 and exactly one line on stderr, `almoner: could not start: …`
 * containing `expected`; no stack anywhere, and on stdout only the log's own lines (JSON ones
 * in the production profile).
 */
async function expectOneLineStop(process: ServerProcess, expected: string, profile: 'dev' | 'production'): Promise<void> {
  const status = await process.waitExit(60_000);
  const output = process.output();
  expect(status.code, output).toBe(1);
  const lines = process.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, output).toHaveLength(1);
  expect(lines[0], output).toMatch(/^almoner: could not start: /);
  expect(lines[0], output).toContain(expected);
  expect(output).not.toContain('    at ');
  expect(output).not.toContain('"stack"');
  if (profile === 'production') {
    for (const line of process.stdout.split('\n').filter((l) => l !== ''))
      expect(() => JSON.parse(line), `not a JSON line: ${line}`).not.toThrow();
  }
}

/** A listener holding a loopback port, as another program would. */
async function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return { port: (holder.address() as net.AddressInfo).port, close: () => new Promise<void>((resolve) => holder.close(() => resolve())) };
}

/** A listener at `port` on loopback, or undefined when that port is taken. */
async function occupy(port: number): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const holder = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    holder.once('error', () => resolve(false));
    holder.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) return undefined;
  return { port: (holder.address() as net.AddressInfo).port, close: () => new Promise<void>((resolve) => holder.close(() => resolve())) };
}

/** Two ports held as another program would: a free port as the base, and the one two above it (the dashboard's). */
async function occupyBaseAndBasePlusTwo(): Promise<{ base: number; holders: { close(): Promise<void> }[] }> {
  for (;;) {
    const first = await occupy(0);
    if (first && first.port <= 65_532) {
      const third = await occupy(first.port + 2);
      if (third) return { base: first.port, holders: [first, third] };
    }
    await first?.close();
  }
}

describe('start errors', () => {
  for (const profile of ['dev', 'production'] as const) {
    it(`${profile} profile: a port already in use is one line naming the port and the setting that moves it`, async () => {
      const busy = await occupyPort();
      try {
        const env =
          profile === 'dev'
            ? { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' }
            : { ...productionEnv(), ALMONER_LOG_LEVEL: 'info' };
        // The API's URL names the port (the other three stay on ports of their own).
        server = spawnServer({ env: { ...env, ALMONER_BASE_URL: `${profile === 'dev' ? 'http' : 'https'}://127.0.0.1:${busy.port}` } });
        await expectOneLineStop(server, `cannot listen on 127.0.0.1:${busy.port} (ALMONER_BASE_URL): the port is already in use`, profile);
        expect(server.stderr).toContain('change the port in ALMONER_BASE_URL or set ALMONER_LISTEN');
      } finally {
        await busy.close();
      }
    }, 90_000);

    it(`${profile} profile: an invalid clients file is one line naming the file, the place and the problem`, async () => {
      const clientsFile = path.join(dataDir, `clients-${profile}.json`);
      fs.writeFileSync(clientsFile, '{"clients": [{"client_id": 5}]}\n');
      const env =
        profile === 'dev'
          ? { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' }
          : { ...productionEnv(), ALMONER_LOG_LEVEL: 'info' };
      server = spawnServer({ env: { ...env, ALMONER_CLIENTS_FILE: clientsFile } });
      await expectOneLineStop(server, `${clientsFile}: line 1, column `, profile);
      expect(server.stderr).toContain('client_id: Invalid input: expected string, received number');
    }, 90_000);
  }

  it('two busy ports of ALMONER_PORT_BASE are named at once, before the embedded PostgreSQL, migrations or seeding start', async () => {
    const { base, holders } = await occupyBaseAndBasePlusTwo();
    const fresh = makeDataDir();
    try {
      // The four URLs follow ALMONER_PORT_BASE: base to base + 3 (none set on its own here).
      const noUrls = {
        ALMONER_BASE_URL: undefined,
        ALMONER_SANDBOX_BASE_URL: undefined,
        ALMONER_DASHBOARD_URL: undefined,
        ALMONER_SANDBOX_DASHBOARD_URL: undefined,
      };
      server = spawnServer({ env: { ...noUrls, ALMONER_PORT_BASE: String(base), ALMONER_DATA_DIR: fresh, ALMONER_LOG_LEVEL: 'info' } });
      await expectOneLineStop(server, 'the ports are already in use (is another Almoner running?)', 'dev');
      expect(server.stderr).toContain(`cannot listen on 127.0.0.1:${base} (ALMONER_BASE_URL)`);
      expect(server.stderr).toContain(`127.0.0.1:${base + 2} (ALMONER_DASHBOARD_URL)`);
      expect(server.stderr).toContain('choose another ALMONER_PORT_BASE');
      // Nothing was started for it: no embedded PostgreSQL was made, nothing at all was written in the data directory.
      expect(fs.existsSync(embeddedPgdata(fresh))).toBe(false);
      expect(fs.readdirSync(fresh)).toEqual([]);
      expect(server.output()).not.toMatch(/initdb|migrations applied|demo data seeded/);
    } finally {
      await Promise.all(holders.map((holder) => holder.close()));
      await removeDataDir(fresh);
    }
  }, 60_000);

  it('a DATABASE_URL naming a database that does not exist: one line with the createdb that makes it', async () => {
    const url = new URL(t.url);
    url.pathname = '/almoner_not_created';
    server = spawnServer({ env: { DATABASE_URL: url.toString(), ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
    await expectOneLineStop(server, 'database "almoner_not_created" does not exist', 'dev');
    const port = url.port || '5432';
    expect(server.stderr).toContain(
      `; create it first: createdb -h ${url.hostname} -p ${port}${url.username ? ` -U ${url.username}` : ''} almoner_not_created`,
    );
  }, 60_000);

  it('an unreachable DATABASE_URL: "cannot connect to the database at host:port (DATABASE_URL)", no stack, not "migrations failed"', async () => {
    server = spawnServer({
      env: { DATABASE_URL: 'postgres://postgres:not-this@127.0.0.1:1/none', ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' },
    });
    const status = await server.waitExit(30_000);
    const output = server.output();
    expect(status.code, output).toBe(1);
    expect(server.stderr, output).toContain('almoner: could not start: cannot connect to the database at 127.0.0.1:1 (DATABASE_URL): ');
    expect(server.stdout, output).toContain('cannot connect to the database at 127.0.0.1:1 (DATABASE_URL)');
    expect(output).not.toContain('migrations failed');
    expect(output).not.toContain('    at ');
    expect(output).not.toContain('"stack"');
    expect(output).not.toContain('not-this');
  }, 60_000);

  it('a mistyped ALMONER_* variable stops the dev start, naming the setting it probably meant', async () => {
    server = spawnServer({
      env: { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_SHUTDOWN_GRACE_SECOND: '5', ALMONER_DATABASE_URL: t.url },
    });
    const status = await server.waitExit(30_000);
    const output = server.output();
    expect(status.code, output).toBe(2);
    expect(server.stderr, output).toContain(
      'ALMONER_SHUTDOWN_GRACE_SECOND (environment): is not a known setting; did you mean ALMONER_SHUTDOWN_GRACE_SECONDS?',
    );
    expect(server.stderr, output).toContain('ALMONER_DATABASE_URL (environment): is not a known setting; did you mean DATABASE_URL?');
    expect(output).not.toContain('    at ');
    expect(output).not.toContain('"stack"');
  }, 60_000);

  it('the production profile starts with a mistyped variable but warns, with the suggestion', async () => {
    server = spawnServer({
      env: { ...productionEnv(), ALMONER_LOG_LEVEL: 'info', ALMONER_LOGLEVEL: 'debug' },
    });
    await server.waitReady(45_000, (ready) => withScheme(ready.urls, 'http').api);
    await waitUntil('the warning', () => server!.stdout.includes('ignoring unknown ALMONER_* environment variables'), 10_000);
    const warning = server.stdout.split('\n').find((line) => line.includes('ignoring unknown ALMONER_* environment variables'))!;
    expect(JSON.parse(warning), server.output()).toMatchObject({
      level: 40,
      variables: ['ALMONER_LOGLEVEL'],
      problems: ['ALMONER_LOGLEVEL (environment): is not a known setting; did you mean ALMONER_LOG_LEVEL?'],
    });
    expect((await server.stop()).code, server.output()).toBe(0);
  }, 90_000);
});
