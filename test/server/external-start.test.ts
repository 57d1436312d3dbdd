import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  allUrls,
  exerciseAdminCommands,
  expectHealthyEverywhere,
  makeDataDir,
  removeDataDir,
  startServer,
  waitUntil,
  type ServerProcess,
} from '../helpers/process.js';

/** The dev profile against an external PostgreSQL named by DATABASE_URL. */

let t: TestDatabase;
let dataDir: string;
let env: Record<string, string>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
  env = { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir };
});

afterAll(async () => {
  await server?.kill();
  await removeDataDir(dataDir);
  await t?.drop();
});

describe('dev profile with DATABASE_URL', () => {
  it('serves all four hosts from the external database, runs the admin commands alongside, and stops cleanly', async () => {
    server = await startServer({ env });
    await expectHealthyEverywhere(server);
    await waitUntil('the dev banner', () => server!.stdout.includes('readonly@example.org'), 10_000);
    for (const url of allUrls(server.urls)) expect(server.stdout, server.output()).toContain(url);
    expect(server.stdout, 'the banner names the database').toContain(t.name);
    const password = decodeURIComponent(new URL(t.url).password);
    if (password) expect(server.stdout + server.stderr, 'the database password is never printed').not.toContain(password);

    // DATABASE_URL wins: no embedded PostgreSQL was initialised in the data directory.
    expect(fs.existsSync(path.join(dataDir, 'pg')), 'no embedded PostgreSQL with DATABASE_URL set').toBe(false);

    // Demo data was seeded into this database on start.
    const demo = await t.db.selectFrom('organizations').select(['ein', 'name']).where('ein', '=', '123456789').execute();
    expect(demo).toEqual([{ ein: '123456789', name: 'Demo Food Bank' }]);

    const { orgId, userId } = await exerciseAdminCommands(env);

    const org = await t.db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst();
    expect(org).toMatchObject({ ein: '551234567', name: 'E2E Org', kind: 'nonprofit' });
    const user = await t.db.selectFrom('users').select(['email']).where('id', '=', userId).executeTakeFirst();
    expect(user).toEqual({ email: 'e2e@example.org' });
    const memberships = await t.db.selectFrom('memberships').select('role').where('organization_id', '=', orgId).execute();
    expect(memberships, 'members remove left no membership').toEqual([]);

    await expectHealthyEverywhere(server);
    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
  }, 90_000);
});
