import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR, PROJECT_ROOT } from '../../src/config/paths.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { openEmbeddedPostgres, type EmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/database.js';
import {
  childEnv,
  expectOneLineFailure,
  makeDataDir,
  removeDataDir,
  request,
  runCli,
  runCliJson,
  spawnServer,
  startServer,
  type ServerProcess,
} from '../helpers/process.js';
import { fencedBlocks } from './markdown.js';

/**
 * docs/operations.md, "Rolling upgrades" and "Backups: the database with the secrets key",
 * tried with real servers on real databases: a build older than the database refuses to
 * start (with the message the docs quote) while a running one keeps serving, and the
 * documented backup block restores a running server's database, which then serves with the
 * secrets key and only with it (another key is refused with the message the docs quote).
 */

const SECRETS_KEY = crypto.randomBytes(32).toString('base64');
const OTHER_SECRETS_KEY = crypto.randomBytes(32).toString('base64');

const databases: TestDatabase[] = [];
const dataDirs: string[] = [];
const servers: ServerProcess[] = [];
const restored: string[] = [];
const clusters: EmbeddedPostgres[] = [];
let scratch: string | undefined;

afterEach(async () => {
  for (const server of servers.splice(0)) await server.kill();
});

afterAll(async () => {
  for (const database of databases) await database.drop();
  for (const cluster of clusters) await cluster.release().catch(() => undefined);
  for (const dir of dataDirs) await removeDataDir(dir);
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  try {
    for (const name of restored) await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

async function serverEnv(): Promise<{ database: TestDatabase; env: Record<string, string> }> {
  const database = await createTestDatabase();
  databases.push(database);
  const dataDir = makeDataDir();
  dataDirs.push(dataDir);
  return {
    database,
    env: { DATABASE_URL: database.url, ALMONER_DATA_DIR: dataDir, ALMONER_DEMO_DATA: 'false', ALMONER_SECRETS_KEY: SECRETS_KEY },
  };
}

async function started(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ env });
  servers.push(server);
  return server;
}

/** The kids a server publishes for the production environment. */
async function publishedKids(server: ServerProcess): Promise<string[]> {
  const res = await request(`${server.urls.api}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  return res
    .json<{ keys: { kid: string }[] }>()
    .keys.map((key) => key.kid)
    .sort();
}

/** A message docs/operations.md quotes in a code span starting with `start`, its line breaks undone. */
function documentedMessage(start: string): string {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8').replace(/\s+/g, ' ');
  const escaped = start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const quoted = new RegExp(`\`(${escaped}[^\`]*)\``).exec(text)?.[1];
  if (!quoted) throw new Error(`docs/operations.md quotes no message starting with "${start}"`);
  return quoted;
}

function scratchDir(): string {
  scratch ??= fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-backup-'));
  return scratch;
}

describe('rolling upgrades (docs/operations.md)', () => {
  it('after a newer build migrates, a running server keeps serving; a server or admin command of the older build refuses, naming the migration', async () => {
    const { database, env } = await serverEnv();
    const running = await started(env);

    // The newer build's `admin -- migrate`: every migration this build has, and one more (additive).
    const newer = fs.mkdtempSync(path.join(scratchDir(), 'newer-migrations-'));
    for (const file of fs.readdirSync(MIGRATIONS_DIR)) fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(newer, file));
    const added = '29991231000000_rolling_upgrade_probe';
    fs.writeFileSync(path.join(newer, `${added}.sql`), 'create table rolling_upgrade_probe (id integer primary key);\n');
    expect(await migrateToLatest(database.db, newer)).toEqual({ applied: [added] });

    // Already running: nothing looks at the migrations after the start.
    expect((await request(`${running.urls.api}/readyz`)).status).toBe(200);
    expect((await request(`${running.urls.api}/.well-known/openid-configuration`)).status).toBe(200);

    // Starting now, this build is the older one: it refuses, and says which migration it lacks.
    const late = spawnServer({ env });
    servers.push(late);
    const status = await late.waitExit(90_000);
    expect(status.code, late.output()).toBe(1);
    const refusal = documentedMessage('corrupted migrations:').replace('<name>', added);
    expect(late.stderr, late.output()).toContain(refusal);
    for (const args of [['migrate'], ['orgs', 'list']]) expectOneLineFailure(args, await runCli(args, { env }), refusal);

    // The running one still serves after all that.
    expect((await request(`${running.urls.api}/readyz`)).status).toBe(200);
  }, 300_000);
});

/** The major version of a PostgreSQL client tool on the PATH (`pg_dump (PostgreSQL) 15.20 …` → 15). */
function clientMajor(tool: string): number | undefined {
  const match = /\(PostgreSQL\) (\d+)/.exec(spawnSync(tool, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * The server binaries (initdb, pg_ctl, postgres) of one PostgreSQL major version, where
 * Debian and Ubuntu install them (package postgresql-<major>), or beside the client tools.
 */
function serverBinariesOf(major: number): { initdb: string; pg_ctl: string; postgres: string } | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_dump'], { encoding: 'utf8' }).stdout.trim();
  const dirs = [`/usr/lib/postgresql/${major}/bin`, ...(onPath ? [path.dirname(fs.realpathSync(onPath))] : [])];
  for (const dir of dirs) {
    const binaries = { initdb: path.join(dir, 'initdb'), pg_ctl: path.join(dir, 'pg_ctl'), postgres: path.join(dir, 'postgres') };
    const version = spawnSync(binaries.postgres, ['--version'], { encoding: 'utf8' }).stdout ?? '';
    if (Object.values(binaries).every((file) => fs.existsSync(file)) && new RegExp(`\\(PostgreSQL\\) ${major}\\.`).test(version))
      return binaries;
  }
  return undefined;
}

/**
 * Where the backup block runs: the run's PostgreSQL, when the client tools on the PATH are
 * of its major version or newer (pg_dump refuses a newer server). Otherwise (the embedded
 * PostgreSQL, newer than a distribution's client tools) a PostgreSQL of the client tools'
 * own major version, started for this test from that version's server binaries, as a
 * reader's backup would run against a server their pg_dump can read.
 */
async function backupDatabase(): Promise<{ adminUrl: string; database: { name: string; url: string }; env: Record<string, string> }> {
  const adminUrl = inject('adminUrl');
  const [{ major }] = (await queryOnce(adminUrl, "select current_setting('server_version_num')::int / 10000 as major")) as [
    { major: number },
  ];
  const tools = clientMajor('pg_dump');
  expect(tools, 'pg_dump --version names its PostgreSQL version').toBeDefined();
  if (tools! >= major) {
    const { database, env } = await serverEnv();
    return { adminUrl, database, env };
  }
  const binaries = serverBinariesOf(tools!);
  expect(
    binaries,
    `pg_dump ${tools} cannot dump the run's PostgreSQL ${major}: install the client tools of PostgreSQL ${major} or newer, ` +
      `or the server of PostgreSQL ${tools} (Debian and Ubuntu: postgresql-${tools}), which this test then runs for the backup`,
  ).toBeDefined();
  const dataDir = makeDataDir();
  dataDirs.push(dataDir);
  const cluster = await openEmbeddedPostgres({
    dataDir,
    stopWhenUnused: 'always',
    binaries: binaries!,
    relocationRoot: path.join(dataDir, 'relocated'),
  });
  clusters.push(cluster);
  const db = createDatabase({ url: cluster.url, poolMax: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  const serverDataDir = makeDataDir();
  dataDirs.push(serverDataDir);
  return {
    adminUrl: cluster.adminUrl,
    database: { name: new URL(cluster.url).pathname.slice(1), url: cluster.url },
    env: { DATABASE_URL: cluster.url, ALMONER_DATA_DIR: serverDataDir, ALMONER_DEMO_DATA: 'false', ALMONER_SECRETS_KEY: SECRETS_KEY },
  };
}

describe('backups (docs/operations.md)', () => {
  it("the documented block restores a running server's database; the copy serves with the same secrets key, and another key is refused", async () => {
    const missing = ['pg_dump', 'pg_restore', 'createdb'].filter(
      (tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0,
    );
    expect(missing, 'the backup example needs the PostgreSQL client tools on the PATH').toEqual([]);

    const { adminUrl, database, env } = await backupDatabase();
    const original = await started(env);
    await runCliJson(['orgs', 'add', '--ein', '12-3456780', '--name', 'Backed Up'], { env });
    const kids = await publishedKids(original);
    expect(kids.length).toBeGreaterThan(0);

    // The block as written, but for the restored database's name (one of this test's own).
    const text = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
    const block = fencedBlocks(text).find((b) => b.body.includes('pg_dump --format=custom'));
    expect(block, 'docs/operations.md has the backup block').toBeDefined();
    const name = `${database.name}_restored`;
    if (adminUrl === inject('adminUrl')) restored.push(name); // else it goes with the test's own PostgreSQL
    expect(block!.body).toContain('almoner_restored');
    const admin = new URL(adminUrl);
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', block!.body.replaceAll('almoner_restored', name)], {
      cwd: fs.mkdtempSync(path.join(scratchDir(), 'dump-')),
      env: childEnv({
        DATABASE_URL: database.url,
        PGHOST: admin.hostname,
        PGPORT: admin.port || '5432',
        PGUSER: decodeURIComponent(admin.username) || 'postgres',
        ...(admin.password ? { PGPASSWORD: decodeURIComponent(admin.password) } : {}),
      }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, `the backup block failed\n${result.stdout}\n${result.stderr}`).toBe(0);
    await original.kill();

    const copyUrl = new URL(database.url);
    copyUrl.pathname = `/${name}`;
    const copyEnv = { ...env, DATABASE_URL: copyUrl.toString() };

    // With the key it was sealed with: the same signing keys, the same data.
    const copy = await started(copyEnv);
    expect(await publishedKids(copy)).toEqual(kids);
    const orgs = await runCliJson(['orgs', 'list'], { env: copyEnv });
    expect(JSON.stringify(orgs)).toContain('12-3456780');
    await copy.kill();

    // With another key: refused at start, saying which key is wrong.
    const wrongKey = spawnServer({ env: { ...copyEnv, ALMONER_SECRETS_KEY: OTHER_SECRETS_KEY } });
    servers.push(wrongKey);
    const status = await wrongKey.waitExit(90_000);
    expect(status.code, wrongKey.output()).not.toBe(0);
    expect(wrongKey.stderr, wrongKey.output()).toContain(documentedMessage('a stored secret cannot be decrypted'));
  }, 400_000);
});
