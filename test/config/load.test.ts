import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { closestEnvName, ConfigError, isAlmonerWorker, loadConfig, unknownEnvProblems, unknownEnvSettings } from '../../src/config/load.js';
import { DEFAULT_CONFIG_DIR } from '../../src/config/paths.js';
import { tempDir } from '../helpers/app.js';

/** The checked-in config/default.json, as a base for a config directory of a test's own. */
function defaults(): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(DEFAULT_CONFIG_DIR, 'default.json'), 'utf8')) as Record<string, unknown>;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function configDir(files: Record<string, unknown>): string {
  const dir = tempDir('almoner-config-');
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

describe('configuration', () => {
  it('loads the dev profile from config/default.json with the documented defaults', () => {
    const config = loadConfig({ env: {} });
    expect(config).toMatchObject({
      profile: 'dev',
      data_dir: './data',
      base_url: 'http://127.0.0.1:3000',
      sandbox_base_url: 'http://127.0.0.1:3001',
      dashboard_url: 'http://127.0.0.1:3002',
      sandbox_dashboard_url: 'http://127.0.0.1:3003',
      demo_data: true,
    });
    expect(config.database_url).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('lets environment variables override files, with lists comma-separated', () => {
    const config = loadConfig({
      env: {
        DATABASE_URL: 'postgres://u@db.internal/almoner',
        ALMONER_BASE_URL: 'http://API.Example.org:80/',
        ALMONER_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8',
        ALMONER_DATA_DIR: '/srv/almoner',
      },
    });
    expect(config.database_url).toBe('postgres://u@db.internal/almoner');
    expect(config.base_url).toBe('http://api.example.org');
    expect(config.trusted_proxies).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(config.data_dir).toBe('/srv/almoner');
  });

  it('moves the four URLs of the config files to four ports from port_base; a URL set in its own variable keeps its port', () => {
    const moved = loadConfig({ env: { ALMONER_PORT_BASE: '4000' } });
    expect([moved.base_url, moved.sandbox_base_url, moved.dashboard_url, moved.sandbox_dashboard_url]).toEqual([
      'http://127.0.0.1:4000',
      'http://127.0.0.1:4001',
      'http://127.0.0.1:4002',
      'http://127.0.0.1:4003',
    ]);
    expect(moved.port_base).toBe(4000);
    // Unset, the defaults are the documented 3000-3003.
    expect(loadConfig({ env: {} }).port_base).toBeUndefined();
    const explicit = loadConfig({ env: { ALMONER_PORT_BASE: '4000', ALMONER_SANDBOX_DASHBOARD_URL: 'http://127.0.0.1:5003' } });
    expect([explicit.dashboard_url, explicit.sandbox_dashboard_url]).toEqual(['http://127.0.0.1:4002', 'http://127.0.0.1:5003']);
    expect(loadConfig({ env: {}, overrides: { port_base: 4100, base_url: 'http://127.0.0.1:0' } }).base_url).toBe('http://127.0.0.1:0');
    // Scheme and host stay those of the config files: the production profile's https URLs.
    const production = loadConfig({
      env: {
        ALMONER_PROFILE: 'production',
        ALMONER_PORT_BASE: '8440',
        DATABASE_URL: 'postgres://db/x',
        ALMONER_TRUSTED_PROXIES: '10.0.0.1',
        ALMONER_SMTP_URL: 'smtp://mail.internal:587',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
      },
    });
    expect([production.base_url, production.sandbox_dashboard_url]).toEqual(['https://127.0.0.1:8440', 'https://127.0.0.1:8443']);
    // Validated like every setting; an explicit URL the moved ones collide with is the duplicate rule's.
    expect(problemsOf(() => loadConfig({ env: { ALMONER_PORT_BASE: '65533' } }))).toEqual([
      'port_base (from ALMONER_PORT_BASE): must be a whole number from 1 to 65532, got "65533"',
    ]);
    expect(problemsOf(() => loadConfig({ env: { ALMONER_PORT_BASE: 'next' } }))).toEqual([
      'port_base (from ALMONER_PORT_BASE): must be a whole number from 1 to 65532, got "next"',
    ]);
    expect(
      problemsOf(() => loadConfig({ env: { ALMONER_PORT_BASE: '4000', ALMONER_BASE_URL: 'http://127.0.0.1:4001' } })).join(),
    ).toContain('the four public URLs (base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url) must all differ');
  });

  it('applies config/<profile>.json over default.json', () => {
    const dir = configDir({
      'default.json': { ...JSON.parse(fs.readFileSync('config/default.json', 'utf8')) },
      'production.json': {
        log_level: 'warn',
        demo_data: false,
        base_url: 'https://a.example',
        sandbox_base_url: 'https://b.example',
        dashboard_url: 'https://c.example',
        sandbox_dashboard_url: 'https://d.example',
      },
    });
    const config = loadConfig({
      configDir: dir,
      env: {
        ALMONER_PROFILE: 'production',
        DATABASE_URL: 'postgres://db/x',
        ALMONER_TRUSTED_PROXIES: '10.0.0.1',
        ALMONER_SMTP_URL: 'smtp://mail.internal:587',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
      },
    });
    expect(config.log_level).toBe('warn');
    expect(config.profile).toBe('production');
  });

  it('reports an invalid value with its path, its source and the rule', () => {
    const problems = problemsOf(() => loadConfig({ env: { ALMONER_BASE_URL: 'not a url', ALMONER_SHUTDOWN_GRACE_SECONDS: 'soon' } }));
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.startsWith('base_url'))).toMatch(/^base_url \(from ALMONER_BASE_URL\): must be an absolute URL/);
    expect(problems.find((p) => p.startsWith('shutdown_grace_seconds'))).toMatch(/ALMONER_SHUTDOWN_GRACE_SECONDS/);
  });

  it('takes passkey_rp_id only as a domain both dashboards are at or under', () => {
    const dashboards = {
      ALMONER_DASHBOARD_URL: 'https://dashboard.example.org',
      ALMONER_SANDBOX_DASHBOARD_URL: 'https://sandbox.example.org',
    };
    expect(loadConfig({ env: { ...dashboards, ALMONER_PASSKEY_RP_ID: 'example.org' } }).passkey_rp_id).toBe('example.org');
    expect(loadConfig({ env: dashboards }).passkey_rp_id).toBeUndefined();
    expect(problemsOf(() => loadConfig({ env: { ...dashboards, ALMONER_PASSKEY_RP_ID: 'dashboard.example.org' } }))).toEqual([
      'passkey_rp_id (from ALMONER_PASSKEY_RP_ID): must be the host of sandbox_dashboard_url (sandbox.example.org) or a domain it is under',
    ]);
    expect(problemsOf(() => loadConfig({ env: { ...dashboards, ALMONER_PASSKEY_RP_ID: 'ample.org' } }))).toHaveLength(2);
    expect(problemsOf(() => loadConfig({ env: { ...dashboards, ALMONER_PASSKEY_RP_ID: 'https://example.org' } }))[0]).toMatch(
      /must be a lowercase domain name/,
    );
  });

  it('reports bad values and unknown keys in a config file with the file named', () => {
    const base = JSON.parse(fs.readFileSync('config/default.json', 'utf8'));
    const dir = configDir({ 'default.json': { ...base, trusted_proxies: ['10.0.0.0/33'], base_urll: 'x', password_time_cost: 1 } });
    const problems = problemsOf(() => loadConfig({ configDir: dir, env: {} }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^trusted_proxies\.0 \(from .*default\.json\): must be an IP address or CIDR range/),
        expect.stringMatching(/^base_urll \(in .*default\.json\): is not a known setting/),
        expect.stringMatching(/^password_time_cost \(from .*default\.json\): /),
      ]),
    );
  });

  it('rejects a config file that is not JSON', () => {
    const dir = configDir({ 'default.json': '{ nope' });
    expect(problemsOf(() => loadConfig({ configDir: dir, env: {} }))[0]).toMatch(/default\.json: is not valid JSON/);
  });

  it('rejects URLs with a path, query or credentials, and duplicates among the four', () => {
    expect(problemsOf(() => loadConfig({ env: { ALMONER_DASHBOARD_URL: 'https://dash.example/app' } }))[0]).toMatch(
      /^dashboard_url .*origin only/,
    );
    expect(problemsOf(() => loadConfig({ env: { ALMONER_DASHBOARD_URL: 'http://127.0.0.1:3000' } }))[0]).toMatch(/must all differ/);
  });

  it('accepts port 0 in several public URLs (each gets a port of its own), but not next to listen', () => {
    const ephemeral = 'http://127.0.0.1:0';
    const env = {
      ALMONER_BASE_URL: ephemeral,
      ALMONER_SANDBOX_BASE_URL: ephemeral,
      ALMONER_DASHBOARD_URL: ephemeral,
      ALMONER_SANDBOX_DASHBOARD_URL: 'http://127.0.0.1:3003',
    };
    expect(loadConfig({ env })).toMatchObject({ base_url: ephemeral, sandbox_base_url: ephemeral, dashboard_url: ephemeral });
    // Fixed ports still may not repeat.
    expect(problemsOf(() => loadConfig({ env: { ...env, ALMONER_DASHBOARD_URL: 'http://127.0.0.1:3003' } }))[0]).toMatch(/must all differ/);
    expect(problemsOf(() => loadConfig({ env: { ...env, ALMONER_LISTEN: '0.0.0.0:8080' } }))).toEqual([
      expect.stringMatching(/^base_url \(from ALMONER_BASE_URL\): port 0 .*needs listen unset/),
    ]);
  });

  it('names every missing production setting at once', () => {
    const problems = problemsOf(() => loadConfig({ env: { ALMONER_PROFILE: 'production' } }));
    expect(problems.some((p) => p.startsWith('database_url') && p.includes('required in the production profile'))).toBe(true);
    expect(problems.some((p) => p.startsWith('tls_cert') && p.includes('ALMONER_TRUSTED_PROXIES'))).toBe(true);
    expect(
      problems.some((p) => p.startsWith('smtp_url') && p.includes('required in the production profile') && p.includes('ALMONER_SMTP_URL')),
    ).toBe(true);
    expect(
      problems.some(
        (p) => p.startsWith('mail_from') && p.includes('required in the production profile') && p.includes('ALMONER_MAIL_FROM'),
      ),
    ).toBe(true);
  });

  it("requires mail_from in production: the default's .invalid address is refused there, and kept in dev", () => {
    const production = {
      ALMONER_PROFILE: 'production',
      DATABASE_URL: 'postgres://db/x',
      ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
      ALMONER_SMTP_URL: 'smtp://mail.internal',
    };
    expect(problemsOf(() => loadConfig({ env: production }))).toEqual([
      expect.stringMatching(
        /^mail_from \(from .*default\.json\): is required in the production profile \(ALMONER_MAIL_FROM\): .*"Almoner <no-reply@almoner\.invalid>" is the dev profile's placeholder$/,
      ),
    ]);
    expect(problemsOf(() => loadConfig({ env: { ...production, ALMONER_MAIL_FROM: 'no-reply@mail.almoner.invalid' } }))).toEqual([
      expect.stringMatching(/^mail_from \(from ALMONER_MAIL_FROM\): is required in the production profile/),
    ]);
    expect(loadConfig({ env: { ...production, ALMONER_MAIL_FROM: 'Food Bank <no-reply@foodbank.example.org>' } }).mail_from).toBe(
      'Food Bank <no-reply@foodbank.example.org>',
    );
    expect(loadConfig({ env: {} }).mail_from).toBe('Almoner <no-reply@almoner.invalid>');
  });

  it('requires smtp_url in production (mail is never kept in a table there), and not in dev', () => {
    const production = {
      ALMONER_PROFILE: 'production',
      DATABASE_URL: 'postgres://db/x',
      ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
      ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
    };
    expect(problemsOf(() => loadConfig({ env: production }))).toEqual([
      expect.stringMatching(/^smtp_url \(set it in config\/ or ALMONER_SMTP_URL\): is required in the production profile/),
    ]);
    expect(problemsOf(() => loadConfig({ env: { ...production, ALMONER_SMTP_URL: 'http://mail.example' } }))).toEqual([
      expect.stringMatching(/^smtp_url \(from ALMONER_SMTP_URL\): must be an smtp:\/\/ or smtps:\/\/ URL/),
    ]);
    expect(loadConfig({ env: { ...production, ALMONER_SMTP_URL: 'smtps://u:p@mail.example:465' } }).smtp_url).toBe(
      'smtps://u:p@mail.example:465',
    );
    expect(loadConfig({ env: {} }).smtp_url).toBeUndefined();
  });

  it('accepts production with a database and trusted proxies, or with TLS material', () => {
    expect(
      loadConfig({
        env: {
          ALMONER_PROFILE: 'production',
          DATABASE_URL: 'postgres://db/x',
          ALMONER_SMTP_URL: 'smtp://mail.internal',
          ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
          ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        },
      }).profile,
    ).toBe('production');
    expect(
      loadConfig({
        env: {
          ALMONER_PROFILE: 'production',
          DATABASE_URL: 'postgres://db/x',
          ALMONER_SMTP_URL: 'smtp://mail.internal',
          ALMONER_TLS_CERT: '/c.pem',
          ALMONER_TLS_KEY: '/k.pem',
          ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        },
      }).tls_cert,
    ).toBe('/c.pem');
  });

  it('refuses plain-http URLs, demo data and a lone TLS file in production', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          ALMONER_PROFILE: 'production',
          DATABASE_URL: 'postgres://db/x',
          ALMONER_TLS_CERT: '/c.pem',
          ALMONER_BASE_URL: 'http://api.example',
          ALMONER_DEMO_DATA: 'true',
        },
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^tls_key .*set together/),
        expect.stringMatching(/^base_url .*https URL in the production profile/),
        expect.stringMatching(/^demo_data .*never seeded/),
      ]),
    );
  });

  it('rejects an unknown profile', () => {
    expect(problemsOf(() => loadConfig({ env: { ALMONER_PROFILE: 'staging' } }))[0]).toMatch(/ALMONER_PROFILE.*"dev" or "production"/);
  });

  it('lists unknown ALMONER_ variables so typos are visible', () => {
    expect(unknownEnvSettings({ ALMONER_BASE_URL: 'x', ALMONER_BASEURL: 'y', ALMONER_PROFILE: 'dev', HOME: '/' })).toEqual([
      'ALMONER_BASEURL',
    ]);
  });

  it('suggests the setting a mistyped ALMONER_ variable probably meant', () => {
    expect(closestEnvName('ALMONER_BASEURL')).toBe('ALMONER_BASE_URL');
    expect(closestEnvName('ALMONER_SECRET_KEY')).toBe('ALMONER_SECRETS_KEY');
    expect(closestEnvName('ALMONER_DATABASE_URL')).toBe('DATABASE_URL');
    expect(closestEnvName('ALMONER_PROFLE')).toBe('ALMONER_PROFILE');
    expect(closestEnvName('ALMONER_SERVICE_HOST')).toBeUndefined();
    expect(unknownEnvProblems({ ALMONER_BASE_URL: 'x', ALMONER_WEBHOOK_TIMEOUT: '5', ALMONER_SERVICE_HOST: '10.0.0.1' })).toEqual([
      'ALMONER_WEBHOOK_TIMEOUT (environment): is not a known setting; did you mean ALMONER_WEBHOOK_TIMEOUT_MS?',
      'ALMONER_SERVICE_HOST (environment): is not a known setting; every setting and its variable is listed in docs/configuration.md',
    ]);
  });

  it("says in the setting's words what it expects, with the value written (never a secret's), for every kind of setting", () => {
    const fromEnv = problemsOf(() =>
      loadConfig({
        env: {
          ALMONER_SHUTDOWN_GRACE_SECONDS: 'soon',
          ALMONER_DATABASE_POOL_MAX: '0',
          ALMONER_LOG_LEVEL: 'verbose',
          ALMONER_DEMO_DATA: 'maybe',
          ALMONER_SECRETS_KEY: 'too-short-secret',
          ALMONER_WEBHOOK_RETRY_SECONDS: '10,x',
        },
      }),
    );
    expect([...fromEnv].sort()).toEqual(
      [
        'shutdown_grace_seconds (from ALMONER_SHUTDOWN_GRACE_SECONDS): must be a whole number from 0 to 600, got "soon"',
        'database_pool_max (from ALMONER_DATABASE_POOL_MAX): must be a whole number from 1 to 200, got "0"',
        'log_level (from ALMONER_LOG_LEVEL): must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
        'demo_data (from ALMONER_DEMO_DATA): must be true or false (yes/no and 1/0 also work), got "maybe"',
        'secrets_key (from ALMONER_SECRETS_KEY): must be at least 32 characters long',
        'webhook_retry_seconds.1 (from ALMONER_WEBHOOK_RETRY_SECONDS): must be a whole number, got "x"',
      ].sort(),
    );
    const dir = configDir({ 'default.json': { ...defaults(), trusted_proxies: '10.0.0.1', mail_from: 42, clients_file: '' } });
    const fromFile = problemsOf(() => loadConfig({ configDir: dir, env: {} }));
    expect(fromFile).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^trusted_proxies \(from .*default\.json\): must be a list: a JSON array in a config file, comma-separated in the environment variable, got "10\.0\.0\.1"$/,
        ),
        expect.stringMatching(/^mail_from \(from .*default\.json\): must be text \(a JSON string in a config file\), got 42$/),
        expect.stringMatching(/^clients_file \(from .*default\.json\): must not be empty, got ""$/),
      ]),
    );
    for (const problem of [...fromEnv, ...fromFile]) {
      expect(problem).not.toMatch(/Invalid|expected \w+, received|too-short-secret/);
    }
  });

  it('reads workers as 1 by default, a whole number, or auto (one per core)', () => {
    expect(loadConfig({ env: {} }).workers).toBe(1);
    expect(loadConfig({ env: { ALMONER_WORKERS: '4' } }).workers).toBe(4);
    expect(loadConfig({ env: { ALMONER_WORKERS: 'auto' } }).workers).toBe(os.availableParallelism());
    expect(loadConfig({ env: {}, configDir: configDir({ 'default.json': { ...defaults(), workers: 3 } }) }).workers).toBe(3);
    expect(loadConfig({ env: {}, configDir: configDir({ 'default.json': { ...defaults(), workers: 'auto' } }) }).workers).toBe(
      os.availableParallelism(),
    );
  });

  it('refuses a worker count that is not auto or a whole number from 1 to 256, naming the setting', () => {
    for (const value of ['0', '-1', '1.5', 'two', 'AUTO', '257', '2x']) {
      const problems = problemsOf(() => loadConfig({ env: { ALMONER_WORKERS: value } }));
      expect(problems, value).toHaveLength(1);
      expect(problems[0], value).toMatch(/^workers \(from ALMONER_WORKERS\): /);
    }
    expect(problemsOf(() => loadConfig({ env: {}, configDir: configDir({ 'default.json': { ...defaults(), workers: 0 } }) }))[0]).toMatch(
      /^workers \(from .*default\.json\): /,
    );
  });

  it('knows the worker marker its own primary sets, and does not warn about it', () => {
    expect(isAlmonerWorker({ ALMONER_CLUSTER_WORKER: '1' })).toBe(true);
    expect(isAlmonerWorker({})).toBe(false);
    expect(unknownEnvSettings({ ALMONER_CLUSTER_WORKER: '1', ALMONER_WORKERS: '2' })).toEqual([]);
  });
});
