import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { AppConfig } from '../../src/config/schema.js';
import type { Db } from '../../src/db/database.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';

const created: string[] = [];
process.on('exit', () => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory the embedded Postgres user could traverse too; removed when the test process exits. */
export function tempDir(prefix = 'almoner-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  created.push(dir);
  return dir;
}

/** The dev profile's configuration with test overrides, ignoring the caller's environment. */
export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): AppConfig {
  const dir = tempDir();
  return loadConfig({ env, overrides: { log_level: 'silent', clients_file: path.join(dir, 'clients.json'), data_dir: dir, ...overrides } });
}

export interface TestApp {
  config: AppConfig;
  runtime: Runtime;
  app: Runtime['app'];
  /** The same app over another database handle (e.g. one that is down). */
  withDatabase(db: Db): Runtime['app'];
}

export async function testApp(db: Db, overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}, logger: Logger = createLogger('silent')): Promise<TestApp> {
  const config = testConfig(overrides, env);
  const runtime = await createRuntime(config, db, logger);
  return {
    config,
    runtime,
    app: runtime.app,
    withDatabase: (other) => buildApp({ config, db: other, logger, oidc: runtime.oidc, csrfKey: crypto.randomBytes(32) }),
  };
}

export const HOSTS = {
  api: '127.0.0.1:3000',
  sandbox_api: '127.0.0.1:3001',
  dashboard: '127.0.0.1:3002',
  sandbox_dashboard: '127.0.0.1:3003',
} as const;
