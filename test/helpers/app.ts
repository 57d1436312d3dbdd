import { loadConfig } from '../../src/config/load.js';
import type { AppConfig } from '../../src/config/schema.js';
import { buildApp } from '../../src/app.js';
import type { Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logging/logger.js';

/** The dev profile's configuration with test overrides, ignoring the caller's environment. */
export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): AppConfig {
  return loadConfig({ env, overrides: { log_level: 'silent', ...overrides } });
}

export function testApp(db: Db, overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) {
  const config = testConfig(overrides, env);
  return { config, app: buildApp({ config, db, logger: createLogger('silent') }) };
}

export const HOSTS = {
  api: '127.0.0.1:3000',
  sandbox_api: '127.0.0.1:3001',
  dashboard: '127.0.0.1:3002',
  sandbox_dashboard: '127.0.0.1:3003',
} as const;
