import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ephemeralUrlEnv, makeDataDir, removeDataDir, spawnServer, waitUntil, withScheme, type ServerProcess } from '../helpers/process.js';

/**
 * Start failures that point at the fix (docs/operations.md, "Starting and stopping"): an
 * unreachable DATABASE_URL named with its host and port, a mistyped ALMONER_* variable with
 * the setting it probably meant.
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

describe('start errors', () => {
  it('an unreachable DATABASE_URL: "cannot connect to the database at host:port (DATABASE_URL)", no stack, not "migrations failed"', async () => {
    server = spawnServer({ env: { DATABASE_URL: 'postgres://postgres:not-this@127.0.0.1:1/none', ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
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
    server = spawnServer({ env: { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_SHUTDOWN_GRACE_SECOND: '5', ALMONER_DATABASE_URL: t.url } });
    const status = await server.waitExit(30_000);
    const output = server.output();
    expect(status.code, output).toBe(2);
    expect(server.stderr, output).toContain('ALMONER_SHUTDOWN_GRACE_SECOND (environment): is not a known setting; did you mean ALMONER_SHUTDOWN_GRACE_SECONDS?');
    expect(server.stderr, output).toContain('ALMONER_DATABASE_URL (environment): is not a known setting; did you mean DATABASE_URL?');
    expect(output).not.toContain('    at ');
    expect(output).not.toContain('"stack"');
  }, 60_000);

  it('the production profile starts with a mistyped variable but warns, with the suggestion', async () => {
    server = spawnServer({
      env: { ...ephemeralUrlEnv('https'), ALMONER_PROFILE: 'production', DATABASE_URL: t.url, ALMONER_SMTP_URL: 'smtp://127.0.0.1:9', ALMONER_DATA_DIR: dataDir, ALMONER_TRUSTED_PROXIES: '10.0.0.0/8', ALMONER_LOG_LEVEL: 'info', ALMONER_LOGLEVEL: 'debug' },
    });
    await server.waitReady(45_000, (ready) => withScheme(ready.urls, 'http').api);
    await waitUntil('the warning', () => server!.stdout.includes('ignoring unknown ALMONER_* environment variables'), 10_000);
    const warning = server.stdout.split('\n').find((line) => line.includes('ignoring unknown ALMONER_* environment variables'))!;
    expect(JSON.parse(warning), server.output()).toMatchObject({ level: 40, variables: ['ALMONER_LOGLEVEL'], problems: ['ALMONER_LOGLEVEL (environment): is not a known setting; did you mean ALMONER_LOG_LEVEL?'] });
    expect((await server.stop()).code, server.output()).toBe(0);
  }, 90_000);
});
