import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  ephemeralUrlEnv,
  makeDataDir,
  removeDataDir,
  startServer,
  waitUntil,
  withScheme,
  spawnServer,
  type ServerProcess,
} from '../helpers/process.js';

/** What the real server prints on stdout in each profile (read from the child process). */

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

const onNode20 = process.versions.node.split('.')[0] === '20';

describe('server output', () => {
  it('dev profile: readable log lines, the banner after the "ready" line, the Node 20 end-of-life notice once (on 20 only)', async () => {
    server = await startServer({ env: { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
    await waitUntil('the dev banner', () => server!.stdout.includes('Stop with Ctrl-C.'), 10_000);
    const lines = server.stdout.split('\n');
    const logLines = lines.filter((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+: /.test(line));
    expect(logLines.length, server.output()).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line.startsWith('{"level"'), `no JSON line in dev: ${line}`).toBe(false);
    const ready = lines.findIndex((line) => /^\[[\d:.]+\] INFO: ready\b/.test(line));
    const banner = lines.findIndex((line) => line.startsWith('Almoner is running'));
    expect(ready, server.output()).toBeGreaterThanOrEqual(0);
    expect(banner, 'the banner comes after the "ready" line').toBeGreaterThan(ready);
    const notices = lines.filter((line) => /WARN: Node\.js \S+ is past its end of life/.test(line));
    expect(notices, server.output()).toHaveLength(onNode20 ? 1 : 0);
    // As the README says: on Node 20 one warning at start (oidc-provider's own is folded into it), else none.
    expect(
      lines.filter((line) => /^\[[\d:.]+\] WARN: /.test(line)),
      server.output(),
    ).toEqual(notices);
    expect(server.output()).not.toContain('Unsupported runtime');
    expect((await server.stop()).code, server.output()).toBe(0);
  }, 90_000);

  it("production profile: one JSON object a line, on stdout and stderr; on Node 20 one warning, oidc-provider's folded into it", async () => {
    server = spawnServer({
      env: {
        ...ephemeralUrlEnv('https'),
        ALMONER_PROFILE: 'production',
        DATABASE_URL: t.url,
        ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        ALMONER_DATA_DIR: dataDir,
        ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
        ALMONER_LOG_LEVEL: 'info',
      },
    });
    await server.waitReady(45_000, (ready) => withScheme(ready.urls, 'http').api);
    await waitUntil('the "ready" log line', () => server!.stdout.includes('"msg":"ready"'), 10_000);
    const lines = server.stdout.split('\n').filter((line) => line !== '');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      records.find((r) => r.msg === 'ready'),
      server.output(),
    ).toMatchObject({ level: 30, service: 'almoner' });
    expect(records.filter((r) => /past its end of life/.test(String(r.msg)))).toHaveLength(onNode20 ? 1 : 0);
    // oidc-provider prints "Unsupported runtime" on Node 20 as it is loaded: the server's own notice says it, once.
    expect(
      records.filter((r) => r.library === 'oidc-provider'),
      server.output(),
    ).toEqual([]);
    // Warnings at start: the end-of-life notice on Node 20, and the production profile's missing secrets key.
    expect(
      records.filter((r) => r.level === 40).map((r) => String(r.msg).split(' ')[0]),
      server.output(),
    ).toEqual([...(onNode20 ? ['Node.js'] : []), 'ALMONER_SECRETS_KEY']);
    for (const line of server.stderr.split('\n').filter((l) => l !== ''))
      expect(() => JSON.parse(line), `not a JSON line on stderr: ${line}`).not.toThrow();
    expect(server.output()).not.toContain('oidc-provider WARNING');
    expect(server.stdout).not.toContain('Almoner is running');
    expect((await server.stop()).code, server.output()).toBe(0);
  }, 90_000);
});
