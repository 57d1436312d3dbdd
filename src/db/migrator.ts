import fs from 'node:fs/promises';
import path from 'node:path';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { MIGRATIONS_DIR } from '../config/paths.js';

/**
 * Forward-only SQL migrations from migrations/, named <timestamp>_<what>.sql and applied in
 * name order under Kysely's migrator (which serialises concurrent runs with an advisory lock).
 * They are plain SQL so they stay frozen in time and never import application code.
 */
class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(this.dir)).filter((name) => /^\d{14}_[a-z0-9_]+\.sql$/.test(name)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await fs.readFile(path.join(this.dir, file), 'utf8');
      // No parameters, so pg uses the simple query protocol and accepts many statements.
      migrations[file.replace(/\.sql$/, '')] = { up: async (db) => void (await sql.raw(text).execute(db)) };
    }
    return migrations;
  }
}

export interface MigrationResult {
  applied: string[];
}

export async function migrateToLatest(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any -- any schema
  dir: string = MIGRATIONS_DIR,
): Promise<MigrationResult> {
  const migrator = new Migrator({
    db,
    provider: new SqlFileMigrationProvider(dir),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(failed ? `migration ${failed} failed: ${reason}` : `migrations failed: ${reason}`, { cause: error });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
