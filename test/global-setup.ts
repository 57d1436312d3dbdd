import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS_DIR, PROJECT_ROOT } from '../src/config/paths.js';
import { createDatabase } from '../src/db/database.js';
import { openEmbeddedPostgres } from '../src/embedded-postgres/server.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { DATA_DIRS_FILE_ENV, registeredDataDirs, stopPostmasterSync } from './helpers/leftover-postgres.js';
import { removeRelocatedPgdata } from './helpers/relocated-pgdata.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
  }
}

function migrationsHash(): string {
  const hash = crypto.createHash('sha256');
  for (const name of fs.readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(name).update(fs.readFileSync(path.join(MIGRATIONS_DIR, name)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Stops every embedded PostgreSQL still running in a data directory the run's tests made, and
 * removes those directories: a test that failed before its own teardown, or a worker that
 * died, must not leave a PostgreSQL running after the run (test/helpers/leftover-postgres.ts).
 */
function sweepDataDirs(runDir: string): void {
  for (const dir of registeredDataDirs(path.join(runDir, 'data-dirs'))) {
    try {
      stopPostmasterSync(dir);
      removeRelocatedPgdata(dir);
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // one directory's failure must not keep the others running
    }
  }
  fs.rmSync(runDir, { recursive: true, force: true });
}

/**
 * Finds the Postgres server (DATABASE_URL, or an embedded PostgreSQL the run starts under
 * data/test-cluster), and makes sure a template database migrated to the current migrations
 * exists. Each test file then clones it, which is far faster than migrating per file.
 * The teardown it returns stops that embedded PostgreSQL and any a test left running.
 */
export default async function setup(project: TestProject) {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-test-run-'));
  // Inherited by the test workers (and the processes they start), which record their data directories in it.
  process.env[DATA_DIRS_FILE_ENV] = path.join(runDir, 'data-dirs');
  let release = async () => undefined as void;
  const teardown = async () => {
    try {
      await release();
    } finally {
      sweepDataDirs(runDir);
    }
  };
  try {
    await prepare(project, (stop) => {
      release = stop;
    });
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

async function prepare(project: TestProject, onRelease: (stop: () => Promise<void>) => void): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const testCluster = path.join(PROJECT_ROOT, 'data', 'test-cluster');
    const postgres = await openEmbeddedPostgres({ dataDir: testCluster, stopWhenUnused: 'always' });
    adminUrl = postgres.adminUrl;
    onRelease(() => postgres.release());
  }
  const template = `almoner_tpl_${migrationsHash()}`;
  await withClient(adminUrl, async (client) => {
    const exists = await client.query('select 1 from pg_database where datname = $1', [template]);
    if (exists.rowCount) return;
    const building = `${template}_b${crypto.randomBytes(3).toString('hex')}`;
    await client.query(`create database ${building}`);
    const db = createDatabase({ url: databaseUrl(adminUrl!, building), poolMax: 1 });
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
    // Renaming last means a half-built template is never cloned, even by a concurrent run.
    await client
      .query(`alter database ${building} rename to ${template}`)
      .catch(async () => client.query(`drop database if exists ${building}`));
  });
  // Test databases left behind by an interrupted run (older than an hour) are dropped.
  await withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>("select datname from pg_database where datname like 'almoner_t\\_%'");
    const cutoff = Date.now() - 3_600_000;
    for (const { datname } of rows) {
      const stamp = Number(datname.split('_')[2]);
      if (Number.isFinite(stamp) && stamp < cutoff)
        await client.query(`drop database if exists ${datname} with (force)`).catch(() => undefined);
    }
  });
  project.provide('adminUrl', adminUrl);
  project.provide('templateDb', template);
}
