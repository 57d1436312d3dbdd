import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { DEFAULT_CONFIG_DIR, MIGRATIONS_DIR, PROJECT_ROOT, REDOC_DIR, VIEWS_DIR } from '../../src/config/paths.js';
import { envNameFor, SETTING_KEYS } from '../../src/config/schema.js';
import { isHealthPath, isLoopback } from '../../src/http/health.js';
import { nodeSupportNotice } from '../../src/server/node-support.js';
import {
  copyProblems,
  copyTarget,
  envOf,
  execForm,
  isIgnored,
  lastOf,
  parseCopy,
  parseDockerfile,
  workdirOf,
  type Stage,
} from './container-files.js';
import { fencedBlocks } from './markdown.js';
import { DEV_ONLY_LOADERS } from '../architecture/dev-only-imports.js';

/**
 * The Dockerfile, .dockerignore and compose.yaml at the repository root (docs/operations.md,
 * "Docker and compose"). Docker does not run where the tests run, so what `docker build` and
 * `docker compose up` would trip on is checked here from the files themselves, against the
 * repository, the configuration schema and the documented production command.
 */

const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
const dockerfile = read('Dockerfile');
const dockerignore = read('.dockerignore');
const stages = parseDockerfile(dockerfile);
const final = stages.at(-1)!;
const finalWorkdir = workdirOf(final);
const imageEnv = envOf(final);

/** Every environment variable Almoner reads as configuration. */
const SETTING_ENV = new Set([...SETTING_KEYS.map(envNameFor), 'ALMONER_PROFILE']);
/** Variables for Node and libuv rather than Almoner, fixed before its code runs (docs/operations.md, "Production profile"). */
const RUNTIME_ENV = new Set(['NODE_ENV', 'UV_THREADPOOL_SIZE']);

/** The production profile's start command as docs/operations.md gives it: the thread pool size and the node command line. */
function documentedStartCommand(): { threadpool: string; argv: string[] } {
  const blocks = fencedBlocks(read('docs/operations.md'));
  for (const block of blocks) {
    const match = /UV_THREADPOOL_SIZE=(\S+) (node [^\n]*?dist\/main\.js)/.exec(block.body);
    if (match) return { threadpool: match[1]!, argv: match[2]!.split(/\s+/) };
  }
  throw new Error('docs/operations.md gives no production start command (UV_THREADPOOL_SIZE=… node … dist/main.js)');
}

/** What the final stage holds, path in the image → where it came from (`build:/app/dist`, or a context path). */
function imageContents(): Map<string, string> {
  const contents = new Map<string, string>();
  let workdir = '/';
  for (const instruction of final.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
    if (instruction.keyword !== 'COPY') continue;
    const copy = parseCopy(instruction);
    for (const source of copy.sources)
      contents.set(copyTarget(copy, source, workdir), copy.from === undefined ? source : `${copy.from}:${source}`);
  }
  return contents;
}

/** Whether the image has `file` (relative to the repository root) at the same place under its working directory. */
function imageHas(file: string, contents: Map<string, string>): boolean {
  const inImage = path.posix.join(finalWorkdir, file);
  return [...contents].some(([target, source]) =>
    source.includes(':')
      ? false
      : (inImage === target || inImage.startsWith(`${target}/`)) && path.posix.join(finalWorkdir, source) === target,
  );
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => fs.statSync(path.join(dir, name)).isFile());
}

describe('Dockerfile', () => {
  it('builds in stages: npm ci and npm run build, npm ci --omit=dev, then an image from the same base', () => {
    const runs = (stage: Stage) =>
      stage.instructions
        .filter((i) => i.keyword === 'RUN')
        .map((i) => i.args)
        .join('\n');
    const build = stages.find((stage) => /\bnpm ci\b(?!.*--omit=dev)/.test(runs(stage)) && /\bnpm run build\b/.test(runs(stage)));
    const deps = stages.find((stage) => /\bnpm ci\b.*--omit=dev/.test(runs(stage)));
    expect(build?.name, 'a named stage runs npm ci and npm run build').toBeDefined();
    expect(deps?.name, 'a named stage runs npm ci --omit=dev').toBeDefined();
    expect(stages.length).toBeGreaterThanOrEqual(3);
    for (const stage of stages) expect(stage.from, 'every stage on one base image').toBe(final.from);
    // A Node the package supports (engines) and that still gets security fixes (the start notice).
    const major = /^node:(\d+)[-.]/.exec(final.from)?.[1];
    expect(major, 'the official node image, with its major version').toBeDefined();
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toContain(`>=${major}.`);
    expect(nodeSupportNotice(`${major}.0.0`)).toBeUndefined();

    // The final image takes dist/ from the build stage and node_modules from the production install.
    const tsconfig = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(tsconfig.compilerOptions.rootDir).toBe('src');
    const contents = imageContents();
    expect(contents.get(path.posix.join(finalWorkdir, 'dist'))).toBe(
      `${build!.name}:${path.posix.join(workdirOf(build!), tsconfig.compilerOptions.outDir)}`,
    );
    expect(contents.get(path.posix.join(finalWorkdir, 'node_modules'))).toBe(
      `${deps!.name}:${path.posix.join(workdirOf(deps!), 'node_modules')}`,
    );
    // What npm run build compiles must be in the build stage's context: the sources and both tsconfig files.
    const buildCopies = build!.instructions.filter((i) => i.keyword === 'COPY').flatMap((i) => parseCopy(i).sources);
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src'])
      expect(buildCopies, needed).toContain(needed);
  });

  it('copies only what exists and .dockerignore keeps in the build context', () => {
    expect(copyProblems(stages, dockerignore)).toEqual([]);
  });

  it('has every file the server reads at run time where the build expects it (the repository layout under its working directory)', () => {
    const contents = imageContents();
    const relative = (dir: string) => path.relative(PROJECT_ROOT, dir).split(path.sep).join('/');
    const runtimeFiles = [
      'package.json',
      ...fs
        .readdirSync(DEFAULT_CONFIG_DIR)
        .filter((name) => name === 'default.json' || name === 'production.json')
        .map((name) => `${relative(DEFAULT_CONFIG_DIR)}/${name}`),
      ...filesUnder(MIGRATIONS_DIR).map((name) => `${relative(MIGRATIONS_DIR)}/${name}`),
      ...filesUnder(VIEWS_DIR).map((name) => `${relative(VIEWS_DIR)}/${name}`),
      // The vendored Redoc bundle the API reference page serves, with its licences.
      ...filesUnder(REDOC_DIR).map((name) => `${relative(REDOC_DIR)}/${name}`),
      // Files under src/ that are not TypeScript are read from src/ itself (the build does not copy them).
      ...filesUnder(path.join(PROJECT_ROOT, 'src'))
        .filter((name) => !name.endsWith('.ts'))
        .map((name) => `src/${name.split(path.sep).join('/')}`),
    ];
    expect(runtimeFiles).toContain('config/production.json');
    expect(runtimeFiles).toContain('src/accounts/common-passwords.txt');
    expect(runtimeFiles).toContain('vendor/redoc/redoc.standalone.js');
    const missing = runtimeFiles.filter((file) => !imageHas(file, contents));
    expect(missing, 'files the server reads at run time but the image lacks').toEqual([]);
    // The clients file is state, never baked into the image.
    expect(imageHas('config/clients.json', contents)).toBe(false);
  });

  it('installs what the server imports: src/ takes at run time only node built-ins and production dependencies (the image omits dev ones)', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const specifiers = new Set<string>();
    for (const file of filesUnder(path.join(PROJECT_ROOT, 'src')).filter((name) => name.endsWith('.ts'))) {
      const text = fs.readFileSync(path.join(PROJECT_ROOT, 'src', file), 'utf8');
      // Static imports and re-exports (type-only ones vanish at build), side-effect and dynamic imports, require.resolve.
      for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^;'"]*?\sfrom\s*'([^']+)'/g))
        if (!match[1]) specifiers.add(match[2]!);
      for (const match of text.matchAll(/(?:^|\n)\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|\.resolve\(\s*'([^']+)'\s*\)/g))
        specifiers.add((match[1] ?? match[2] ?? match[3])!);
    }
    const packages = [...specifiers]
      .filter((s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:') && !builtinModules.includes(s))
      .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2) : s.split('/').slice(0, 1)).join('/'));
    expect(packages).toContain('oidc-provider');
    // Besides the dev profile's own packages, which only their loaders import() and the image
    // does without (test/architecture/dev-only-packages.test.ts, test/server/production-install.test.ts).
    const devOnly = new Set(DEV_ONLY_LOADERS.flatMap((loader) => loader.packages));
    for (const name of devOnly) if (!name.endsWith('/*')) expect(pkg.devDependencies, `${name} is a dev dependency`).toHaveProperty([name]);
    expect(
      [...new Set(packages)].filter((name) => !(name in pkg.dependencies) && !devOnly.has(name)),
      'imported at run time but not in dependencies',
    ).toEqual([]);
  });

  it('starts the production profile command of docs/operations.md (and of npm start), as an unprivileged user', () => {
    const documented = documentedStartCommand();
    // Production runs node itself: npm's own first lines on stdout are not JSON (docs/operations.md, "Production profile").
    const production = fencedBlocks(read('docs/operations.md')).find((block) => block.body.includes('ALMONER_PROFILE=production'))!;
    expect(production.body).not.toContain('npm start');
    expect(production.body).toContain('npm run build');
    const readme = read('README.md').replace(/\s+/g, ' ');
    expect(readme).toContain('The production profile (`ALMONER_PROFILE=production node dist/main.js` after `npm run build`;');
    const cmd = execForm(lastOf(final, 'CMD')?.args ?? '');
    expect(cmd, 'CMD in exec form, so node is PID 1 and receives SIGTERM').toBeDefined();
    expect(cmd).toEqual(documented.argv);
    expect(imageEnv.UV_THREADPOOL_SIZE).toBe(documented.threadpool);
    expect(imageEnv.ALMONER_PROFILE).toBe('production');
    // npm start runs the sources with the same V8 flags and the same thread pool default.
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toContain(`UV_THREADPOOL_SIZE=\${UV_THREADPOOL_SIZE:-${documented.threadpool}}`);
    const flags = documented.argv.slice(1, -1);
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(start).toContain(` ${flag} `);
    expect(
      fs.existsSync(path.join(PROJECT_ROOT, 'src', `${path.posix.basename(documented.argv.at(-1)!, '.js')}.ts`)),
      'dist/main.js is compiled from src/main.ts',
    ).toBe(true);

    const user = lastOf(final, 'USER')?.args;
    expect(user, 'a USER in the final stage').toBeDefined();
    expect(['root', '0'], 'not root').not.toContain(user!.split(':')[0]);
    const userLine = lastOf(final, 'USER')!.line;
    expect(
      final.instructions.filter((i) => i.line > userLine && i.keyword === 'RUN'),
      'nothing runs after USER that needs root',
    ).toEqual([]);
  });

  it('names only real settings, and asks a health path, over loopback, on the port it listens on and exposes', () => {
    for (const name of Object.keys(imageEnv)) expect(SETTING_ENV.has(name) || RUNTIME_ENV.has(name), `ENV ${name} is a setting`).toBe(true);
    const listenPort = /:(\d+)$/.exec(imageEnv.ALMONER_LISTEN ?? '')?.[1];
    expect(listenPort, 'the image sets ALMONER_LISTEN').toBeDefined();
    expect(lastOf(final, 'EXPOSE')?.args.split(/\s+/)).toContain(listenPort);

    const healthcheck = lastOf(final, 'HEALTHCHECK')?.args ?? '';
    const command = execForm(healthcheck.replace(/^(--\S+\s+)*CMD\s+/, ''));
    expect(command, 'HEALTHCHECK CMD in exec form (the image has no curl)').toEqual(['node', 'scripts/healthcheck.mjs']);
    // The script is in the image, and asks /healthz on loopback at ALMONER_LISTEN's port
    // (test/server/healthcheck-script.test.ts runs it against both kinds of production start).
    expect(
      final.instructions.some((i) => i.keyword === 'COPY' && /^scripts\/healthcheck\.mjs\s+\.\/scripts\/$/.test(i.args)),
      'COPY scripts/healthcheck.mjs ./scripts/',
    ).toBe(true);
    const script = fs.readFileSync(path.join(PROJECT_ROOT, 'scripts/healthcheck.mjs'), 'utf8');
    const probe = /path: '([^']+)'/.exec(script)?.[1] ?? '';
    expect(isHealthPath('GET', probe), `${probe} is /healthz or /readyz`).toBe(true);
    expect(probe, 'liveness: a database outage must not restart every container').toBe('/healthz');
    expect(script).toContain('ALMONER_LISTEN');
  });

  it('the checks themselves report a missing source, an excluded one, an unknown stage, and follow .dockerignore', () => {
    const broken = parseDockerfile(
      'FROM node:20 AS build\nCOPY package.json \\\n  nowhere.txt ./\nFROM node:20\nCOPY --from=bild /app/dist ./dist\nCOPY data/secrets.key ./\n',
    );
    expect(copyProblems(broken, 'data\n', (file) => file !== 'nowhere.txt')).toEqual([
      'line 2: nowhere.txt does not exist',
      'line 5: --from=bild names no earlier stage',
      'line 6: data/secrets.key is excluded by .dockerignore',
    ]);
    expect(isIgnored('docs/operations.md', 'docs\n!docs/operations.md\n')).toBe(false);
    expect(isIgnored('src/x.log', '**/*.log\n')).toBe(true);
    expect(isIgnored('src/main.ts', '*.log\nsrc/*.js\n')).toBe(false);
  });
});

describe('.dockerignore', () => {
  it('keeps local state and secrets, dependencies and builds out of the build context', () => {
    for (const file of [
      'data/secrets.key',
      'data/embedded-postgres.json',
      '.env',
      'config/clients.json',
      'config/clients.json.lock',
      'node_modules/pg/package.json',
      'dist/main.js',
      '.git/config',
    ]) {
      expect(isIgnored(file, dockerignore), file).toBe(true);
    }
  });
});

// ---------------------------------------------------------------- compose.yaml

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] | string };
  stop_grace_period?: string;
  networks?: string[];
}

interface Compose {
  services: Record<string, ComposeService>;
  networks?: Record<string, { ipam?: { config?: { subnet?: string; gateway?: string }[] } }>;
  volumes?: Record<string, unknown>;
}

const compose = YAML.parse(read('compose.yaml')) as Compose;
const almoner = compose.services.almoner!;
const postgres = compose.services.postgres!;

/** Sample values for what compose.yaml requires from its .env (the docs say what each is). */
const DOT_ENV: Record<string, string> = {
  POSTGRES_PASSWORD: '0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7',
  ALMONER_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  ALMONER_SMTP_URL: 'smtps://mailer:secret@smtp.example.org:465',
  ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
};

/** Compose's interpolation: ${NAME:?message} needs NAME from .env, ${NAME:-default} falls back. */
function interpolate(value: string, dotEnv: Record<string, string>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([?-])([^}]*))?\}/g, (_, name: string, kind: string | undefined, rest: string) => {
    if (dotEnv[name] !== undefined) return dotEnv[name];
    if (kind === '-') return rest;
    throw new Error(`compose.yaml needs ${name} from .env (${rest || 'no message'})`);
  });
}

function serviceEnv(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value), DOT_ENV)]));
}

function seconds(duration: string): number {
  const match = /^(\d+)(s|m)$/.exec(duration);
  if (!match) throw new Error(`cannot read the duration ${duration}`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

/** The configuration the container would load: the image's ENV, then compose's environment. */
function containerConfig() {
  const env = { ...imageEnv, ...serviceEnv(almoner) };
  return loadConfig({ env, configDir: DEFAULT_CONFIG_DIR });
}

describe('compose.yaml', () => {
  it('runs the image of this Dockerfile after PostgreSQL 13 or later answers', () => {
    const build = typeof almoner.build === 'string' ? { context: almoner.build } : almoner.build;
    expect(path.posix.normalize(build?.context ?? ''), 'built from the repository root').toBe('.');
    expect(build && 'dockerfile' in build ? build.dockerfile : 'Dockerfile').toBe('Dockerfile');
    const major = Number(/^postgres:(\d+)/.exec(postgres.image ?? '')?.[1]);
    expect(major).toBeGreaterThanOrEqual(13);
    expect(almoner.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(JSON.stringify(postgres.healthcheck?.test)).toContain('pg_isready');
  });

  it('names only real settings, and with its .env filled in they load as a valid production configuration', () => {
    for (const name of Object.keys(almoner.environment ?? {}))
      expect(SETTING_ENV.has(name) || RUNTIME_ENV.has(name), `${name} is a setting of src/config/schema.ts`).toBe(true);
    const config = containerConfig();
    expect(config.profile).toBe('production');
    // DATABASE_URL names the postgres service, its user, password and database.
    const database = new URL(config.database_url!);
    const pgEnv = serviceEnv(postgres);
    expect(database.hostname).toBe('postgres');
    expect(database.port || '5432').toBe('5432');
    expect(database.username).toBe(pgEnv.POSTGRES_USER);
    expect(decodeURIComponent(database.password)).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(database.pathname).toBe(`/${pgEnv.POSTGRES_DB}`);
    expect(config.secrets_key, 'one secrets key for every process, from .env').toBe(DOT_ENV.ALMONER_SECRETS_KEY);
    // Without the required .env values compose refuses to start rather than run without them.
    expect(() => interpolate(String(almoner.environment?.ALMONER_SECRETS_KEY), {})).toThrow(/ALMONER_SECRETS_KEY/);
    // The production profile refuses to start without a From address of its own.
    expect(() => interpolate(String(almoner.environment?.ALMONER_MAIL_FROM), {})).toThrow(/ALMONER_MAIL_FROM/);
  });

  it('publishes only ports Almoner listens on, and trusts the network gateway the host proxy comes from', () => {
    const config = containerConfig();
    const listened = [...(config.listen ?? []), ...(config.metrics_listen ? [config.metrics_listen] : [])].map(
      (address) => /:(\d+)$/.exec(address)![1],
    );
    expect(almoner.ports?.length).toBeGreaterThan(0);
    for (const mapping of almoner.ports ?? []) {
      const parts = mapping.split(':');
      expect(listened, `${mapping}: the container port is one Almoner listens on`).toContain(parts.at(-1));
      expect(
        parts.length === 3 && isLoopback(parts[0]!),
        `${mapping}: published on the host's loopback only, for a proxy on the host`,
      ).toBe(true);
    }
    const gateways = Object.values(compose.networks ?? {}).flatMap((network) => network.ipam?.config?.map((c) => c.gateway) ?? []);
    expect(gateways.length).toBeGreaterThan(0);
    for (const gateway of gateways) expect(config.trusted_proxies).toContain(gateway);
  });

  it('keeps the clients file and the data directory on a volume, and waits longer than the shutdown grace to stop', () => {
    const config = containerConfig();
    const mounts = (almoner.volumes ?? []).map((volume) => volume.split(':'));
    const state = mounts.find(([name]) => Object.keys(compose.volumes ?? {}).includes(name!));
    expect(state, 'a named volume').toBeDefined();
    const target = state![1]!;
    for (const file of [config.clients_file, config.data_dir])
      expect(path.posix.resolve(finalWorkdir, file).startsWith(`${target}/`), `${file} is on the volume ${target}`).toBe(true);
    const declared = final.instructions.filter((i) => i.keyword === 'VOLUME').map((i) => i.args);
    expect(declared, 'the image declares the volume (so a new one takes its ownership)').toContain(target);
    expect(seconds(almoner.stop_grace_period ?? '10s')).toBeGreaterThan(config.shutdown_grace_seconds);
  });

  it('is said to be documentation, since Docker does not run here', () => {
    expect(read('compose.yaml')).toMatch(/^# [^\n]*\n#\n# Documentation, not something this repository runs/);
    expect(read('docs/operations.md').replace(/\s+/g, ' ')).toContain(
      'Docker does not run on the machines Almoner is developed and tested on',
    );
  });
});
