import fs from 'node:fs';
import path from 'node:path';
import { configSchema, envNameFor, LIST_SETTINGS, SETTING_KEYS, type AppConfig } from './schema.js';
import { DEFAULT_CONFIG_DIR } from './paths.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** Environment to read; defaults to process.env. Only this module reads process.env. */
  env?: NodeJS.ProcessEnv;
  /** Directory holding default.json and <profile>.json; ALMONER_CONFIG_DIR or ./config by default. */
  configDir?: string;
  /** Values applied last, for tests and tools. */
  overrides?: Record<string, unknown>;
}

type Source = string;

function readJsonFile(file: string, problems: string[]): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    problems.push(`${file}: cannot be read (${(error as Error).message})`);
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`${file}: must hold a JSON object`);
      return undefined;
    }
    return parsed as Record<string, unknown>;
  } catch (error) {
    problems.push(`${file}: is not valid JSON (${(error as Error).message})`);
    return undefined;
  }
}

function fromEnv(env: NodeJS.ProcessEnv, key: string): unknown {
  const raw = env[envNameFor(key)];
  if (raw === undefined || raw === '') return undefined;
  if (LIST_SETTINGS.has(key)) return raw.split(',').map((part) => part.trim()).filter(Boolean);
  return raw;
}

/**
 * Reads config/default.json, then config/<profile>.json, then the environment, validates the
 * result once and freezes it. Every bad key is reported with its path, its source and the rule.
 */
export function loadConfig(options: LoadOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const profile = env.ALMONER_PROFILE || 'dev';
  if (profile !== 'dev' && profile !== 'production') {
    throw new ConfigError([`profile (from ALMONER_PROFILE): must be "dev" or "production", got "${profile}"`]);
  }
  const configDir = options.configDir ?? env.ALMONER_CONFIG_DIR ?? DEFAULT_CONFIG_DIR;

  const merged: Record<string, unknown> = { profile };
  const sources = new Map<string, Source>([['profile', 'ALMONER_PROFILE']]);
  for (const name of ['default.json', `${profile}.json`]) {
    const file = path.join(configDir, name);
    const values = readJsonFile(file, problems);
    if (!values) continue;
    for (const [key, value] of Object.entries(values)) {
      if (key === 'profile') {
        problems.push(`profile (in ${file}): is chosen by ALMONER_PROFILE, not by a config file`);
        continue;
      }
      merged[key] = value;
      sources.set(key, file);
    }
  }
  for (const key of SETTING_KEYS) {
    const value = fromEnv(env, key);
    if (value === undefined) continue;
    merged[key] = value;
    sources.set(key, envNameFor(key));
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    merged[key] = value;
    sources.set(key, 'override');
  }

  const result = configSchema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          problems.push(`${key} (in ${sources.get(key) ?? 'configuration'}): is not a known setting`);
        }
        continue;
      }
      const keyPath = issue.path.map(String).join('.') || '(root)';
      const topKey = String(issue.path[0] ?? '');
      const source = sources.get(topKey);
      const where = source ? ` (from ${source})` : ` (set it in config/ or ${envNameFor(topKey)})`;
      problems.push(`${keyPath}${where}: ${issue.message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(result.data!) as AppConfig;
}

/**
 * Set by the primary (workers > 1) in the environment of each worker it forks, never by an
 * operator: a process under another cluster manager (pm2's cluster mode) is not an Almoner worker.
 */
export const CLUSTER_WORKER_ENV = 'ALMONER_CLUSTER_WORKER';

/** Whether this process is a worker forked by an Almoner primary (see src/server/workers.ts). */
export function isAlmonerWorker(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[CLUSTER_WORKER_ENV] === '1';
}

/** ALMONER_* variables that match no setting: reported as a warning, never silently ignored. */
export function unknownEnvSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set([...SETTING_KEYS.map(envNameFor), 'ALMONER_PROFILE', 'ALMONER_CONFIG_DIR', CLUSTER_WORKER_ENV]);
  return Object.keys(env).filter((name) => name.startsWith('ALMONER_') && !known.has(name));
}
