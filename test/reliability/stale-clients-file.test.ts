import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { basic } from '../helpers/flow.js';
import { makeDataDir, removeDataDir, startServer, type ServerProcess } from '../helpers/process.js';

/**
 * Two machines on one database, each with its own copy of the clients file. Machine B starts
 * with a copy older than the registry (taken before A registered a client): its start must
 * not unregister A's client anywhere, it says so in its log and on /readyz, and a file that
 * declares a higher revision still replaces the registry on purpose.
 */

interface Credentials {
  client_id: string;
  client_secret: string;
}

let t: TestDatabase;
let dirA: string;
let dirB: string;
let a: ServerProcess | undefined;
let b: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dirA = makeDataDir();
  dirB = makeDataDir();
}, 30_000);
afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await t?.drop();
  await removeDataDir(dirA);
  await removeDataDir(dirB);
});

function serverEnv(dir: string): Record<string, string> {
  return {
    DATABASE_URL: t.url,
    ALMONER_DATA_DIR: dir,
    ALMONER_CLIENTS_FILE: path.join(dir, 'clients.json'),
    ALMONER_CLIENTS_POLL_SECONDS: '1',
    ALMONER_DEMO_DATA: 'false',
    ALMONER_SECRETS_KEY: TEST_SECRETS_KEY,
  };
}

async function register(file: string, name: string): Promise<Credentials> {
  const run = await runAdmin(
    [
      'clients',
      'add',
      '--environment',
      'production',
      '--name',
      name,
      '--redirect-uri',
      'https://app.example.org/cb',
      '--scope',
      'read_only',
      '--json',
    ],
    { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: file },
  );
  if (run.code !== 0) throw new Error(`clients add exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as Credentials;
}

/** A refresh grant with a bogus token: invalid_grant means the client authenticated, invalid_client that it is not registered. */
async function authenticates(server: ServerProcess, credentials: Credentials): Promise<string | undefined> {
  const response = await fetch(`${server.urls.api}/auth/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(credentials.client_id, credentials.client_secret),
    },
    body: 'grant_type=refresh_token&refresh_token=bogus',
  });
  return ((await response.json()) as { error?: string }).error;
}

async function readyz(server: ServerProcess): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.urls.api}/readyz`);
  return { status: response.status, body: await response.json() };
}

describe('a stale clients file on a second machine', () => {
  it('does not unregister the first machine’s clients; the second says so in its log and on /readyz', async () => {
    const fileA = path.join(dirA, 'clients.json');
    const fileB = path.join(dirB, 'clients.json');
    a = await startServer({ env: serverEnv(dirA) });
    const early = await register(fileA, 'Early App');
    // Machine B got its copy of the file then; A registers one more client afterwards.
    fs.copyFileSync(fileA, fileB);
    const late = await register(fileA, 'Late App');
    await expect.poll(() => authenticates(a!, late), { timeout: 5_000 }).toBe('invalid_grant');

    b = await startServer({ env: serverEnv(dirB) });
    // A few of B's polls (every second), then past the 1 s a registration read is reused.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (const server of [a, b]) {
      expect(await authenticates(server, late), b.output()).toBe('invalid_grant');
      expect(await authenticates(server, early)).toBe('invalid_grant');
    }

    const refusals = b
      .output()
      .split('\n')
      .filter((line) => line.includes(`${fileB}: not applied`));
    expect(refusals, b.output()).toHaveLength(1);
    expect(refusals[0]).toMatch(/WARN/);
    expect(refusals[0]).toMatch(/older than the client registry.*revision 1;.*revision 2\b/);
    const readyB = await readyz(b);
    expect(readyB.status).toBe(200);
    expect(readyB.body).toEqual({
      status: 'ready',
      warnings: [{ code: 'clients_file_not_applied', detail: expect.stringContaining(`${fileB}: not applied`) }],
    });
    expect(await readyz(a)).toEqual({ status: 200, body: { status: 'ready' } });

    // A deliberate replacement: B's file declares the next revision; it becomes the registry
    // everywhere, and A's file is now the stale one (clients validate on A says so).
    const document = JSON.parse(fs.readFileSync(fileB, 'utf8')) as { revision: number };
    expect(document.revision).toBe(1);
    fs.writeFileSync(fileB, JSON.stringify({ ...document, revision: 3 }));
    await expect.poll(() => authenticates(a!, late), { timeout: 8_000 }).toBe('invalid_client');
    expect(await authenticates(a, early)).toBe('invalid_grant');
    await expect.poll(async () => (await readyz(b!)).body, { timeout: 5_000 }).toEqual({ status: 'ready' });
    const validateA = await runAdmin(['clients', 'validate', '--json'], { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: fileA });
    expect(JSON.parse(validateA.stdout)).toMatchObject({
      valid: true,
      revision: 2,
      registry: { standing: 'older', revision: 3, applied_by: expect.stringContaining(fileB) },
    });
  }, 120_000);
});
