import crypto from 'node:crypto';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { AppConfig } from '../../src/config/schema.js';
import type { Db } from '../../src/db/database.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { decodeSecretsKey, SecretBox } from '../../src/keys/secret-box.js';
import { tempDir } from './temp-dirs.js';

export { removeTempDirs, tempDir } from './temp-dirs.js';

/** One master key for every in-process app of a test run, so apps sharing a database can read each other's secrets. */
export const TEST_SECRETS_KEY = crypto.createHash('sha256').update('almoner test secrets key').digest('base64url');
export const testBox = new SecretBox(decodeSecretsKey(TEST_SECRETS_KEY));

/** The dev profile's configuration with test overrides, ignoring the caller's environment. */
export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): AppConfig {
  const dir = tempDir();
  return loadConfig({
    env,
    overrides: {
      log_level: 'silent',
      clients_file: path.join(dir, 'clients.json'),
      data_dir: dir,
      secrets_key: TEST_SECRETS_KEY,
      ...overrides,
    },
  });
}

export interface TestApp {
  config: AppConfig;
  runtime: Runtime;
  app: Runtime['app'];
  /** The same app over another database handle (e.g. one that is down). */
  withDatabase(db: Db): Runtime['app'];
}

export async function testApp(
  db: Db,
  overrides: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
  logger: Logger = createLogger('silent'),
  runtimeOptions: RuntimeOptions = {},
): Promise<TestApp> {
  const config = testConfig(overrides, env);
  const runtime = await createRuntime(config, db, logger, runtimeOptions);
  return {
    config,
    runtime,
    app: runtime.app,
    withDatabase: (other) => buildApp({ config, db: other, logger, oidc: runtime.oidc, serverKeys: runtime.keys, box: testBox }),
  };
}

export const HOSTS = {
  api: '127.0.0.1:3000',
  sandbox_api: '127.0.0.1:3001',
  dashboard: '127.0.0.1:3002',
  sandbox_dashboard: '127.0.0.1:3003',
} as const;
