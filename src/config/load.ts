import fs from 'node:fs';
import path from 'node:path';
import type { core } from 'zod';
import {
  configSchema,
  portBaseSchema,
  envNameFor,
  LIST_SETTINGS,
  PUBLIC_URL_KEYS,
  SECRET_SETTINGS,
  SETTING_KEYS,
  type AppConfig,
} from './schema.js';
import { DEFAULT_CONFIG_DIR } from './paths.js';
import { editDistance } from './edit-distance.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    // One problem is one line; several are listed under it.
    super(
      problems.length === 1
        ? `invalid configuration: ${problems[0]}`
        : `invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
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
  if (LIST_SETTINGS.has(key))
    return raw
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  return raw;
}

/**
 * port_base (docs/configuration.md, "Moving the ports"): the four public URLs that come from the
 * config files move to base, base + 1, base + 2 and base + 3, each keeping its scheme and host;
 * a URL set explicitly (its environment variable, an override) keeps its own port. A port_base
 * the schema refuses moves nothing: the schema names it.
 */
function applyPortBase(merged: Record<string, unknown>, sources: Map<string, Source>, fromFile: ReadonlySet<string>): void {
  const parsed = portBaseSchema.safeParse(merged.port_base);
  if (!parsed.success || parsed.data === undefined) return;
  const base = parsed.data;
  PUBLIC_URL_KEYS.forEach((key, i) => {
    const value = merged[key];
    if (!fromFile.has(key) || typeof value !== 'string' || !URL.canParse(value)) return;
    const url = new URL(value);
    url.port = String(base + i);
    merged[key] = url.origin;
    sources.set(key, `${sources.get(key)} and ${sources.get('port_base')}`);
  });
}

type Issue = core.$ZodRawIssue;

/**
 * zod's own wording ("Invalid input: expected number, received NaN") in the settings' words:
 * what the setting expects. A rule of the schema that carries its own message keeps it.
 */
function expectation(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue.expected === 'array') return 'must be a list: a JSON array in a config file, comma-separated in the environment variable';
      if (issue.expected === 'boolean') return 'must be true or false (yes/no and 1/0 also work)';
      if (issue.expected === 'number' || issue.expected === 'int') return 'must be a whole number';
      if (issue.expected === 'string') return 'must be text (a JSON string in a config file)';
      return `must be a ${issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'string')
        return Number(issue.minimum) <= 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters long`;
      if (issue.origin === 'array') return `must list at least ${issue.minimum} item(s)`;
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters long`;
      if (issue.origin === 'array') return `must list at most ${issue.maximum} items`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}`;
    default:
      return undefined;
  }
}

/** The value a validation problem's path names in the merged settings, as written (before coercion). */
function valueAt(merged: Record<string, unknown>, keyPath: readonly PropertyKey[]): unknown {
  let value: unknown = merged;
  for (const key of keyPath) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** `, got "soon"`: what was written, so the fix is obvious; never for a setting that holds a secret. */
function gotPart(key: string, value: unknown): string {
  if (value === undefined || SECRET_SETTINGS.has(key)) return '';
  const shown = JSON.stringify(value) ?? String(value);
  return `, got ${shown.length > 80 ? `${shown.slice(0, 77)}...` : shown}`;
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
  /** Settings whose value is a config file's (the environment and overrides are set for this run). */
  const fromFile = new Set<string>();
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
      fromFile.add(key);
    }
  }
  for (const key of SETTING_KEYS) {
    const value = fromEnv(env, key);
    if (value === undefined) continue;
    merged[key] = value;
    sources.set(key, envNameFor(key));
    fromFile.delete(key);
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    merged[key] = value;
    sources.set(key, 'override');
    fromFile.delete(key);
  }
  applyPortBase(merged, sources, fromFile);

  const result = configSchema.safeParse(merged, { error: expectation });
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
      // A rule of the schema's own (code custom) says what it needs in full, often about several settings.
      const got = issue.code === 'custom' ? '' : gotPart(topKey, valueAt(merged, issue.path));
      problems.push(`${keyPath}${where}: ${issue.message}${got}`);
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

/** Whether this process runs the tests (NODE_ENV=test, or under vitest): pages then render strictly (src/views/render.ts). */
export function isTestRun(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV === 'test' || env.VITEST !== undefined;
}

/** Variables Almoner reads that are not settings of the schema. */
const OTHER_ENV_NAMES = ['ALMONER_PROFILE', 'ALMONER_CONFIG_DIR', CLUSTER_WORKER_ENV];

/**
 * ALMONER_* variables that match no setting, never silently ignored: the dev profile refuses to
 * start, the production profile warns (docs/operations.md, "Starting and stopping").
 */
export function unknownEnvSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set([...SETTING_KEYS.map(envNameFor), ...OTHER_ENV_NAMES]);
  return Object.keys(env).filter((name) => name.startsWith('ALMONER_') && !known.has(name));
}

/**
 * The variable an unknown ALMONER_* name most likely meant: the closest setting (by its name
 * after ALMONER_, so ALMONER_DATABASE_URL finds DATABASE_URL), if close enough to be a typo.
 */
export function closestEnvName(name: string): string | undefined {
  const written = name.replace(/^ALMONER_/, '');
  const candidates = [
    ...SETTING_KEYS.map((key) => ({ bare: key.toUpperCase(), env: envNameFor(key) })),
    ...OTHER_ENV_NAMES.map((env) => ({ bare: env.replace(/^ALMONER_/, ''), env })),
  ];
  let best: { env: string; distance: number } | undefined;
  for (const candidate of candidates) {
    // Underscores are the likeliest slip (ALMONER_BASEURL), so they cost nothing here.
    const distance = Math.min(
      editDistance(written, candidate.bare),
      editDistance(written.replaceAll('_', ''), candidate.bare.replaceAll('_', '')),
    );
    if (!best || distance < best.distance) best = { env: candidate.env, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(written.length / 4)) ? best.env : undefined;
}

/** One line per unknown ALMONER_* variable: what it is not, and the setting it probably meant. */
export function unknownEnvProblems(env: NodeJS.ProcessEnv = process.env): string[] {
  return unknownEnvSettings(env).map((name) => {
    const meant = closestEnvName(name);
    return `${name} (environment): is not a known setting; ${meant ? `did you mean ${meant}?` : 'every setting and its variable is listed in docs/configuration.md'}`;
  });
}
