import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { COMMANDS } from '../../src/cli/registry.js';
import { usageUnits } from '../../src/cli/usage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { childEnv } from '../helpers/process.js';
import { runAdmin } from '../helpers/admin-cli.js';

/**
 * The admin CLI's usage contract: --help fits 80 columns, and every usage error exits 2 with
 * one line on stderr. Errors the usage line states (missing option, value not among those
 * listed, unknown command or option) are found before any database is opened: those rows run
 * against a DATABASE_URL nobody listens on, where opening one would exit 1.
 */

const NOWHERE = 'postgres://postgres@127.0.0.1:1/nowhere';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

async function admin(argv: string[], databaseUrl: string, stdin = '') {
  return runAdmin(argv, { DATABASE_URL: databaseUrl }, stdin);
}

/** The command's words plus every required option with an acceptable value, except `leaveOut`. */
function requiredArgs(command: (typeof COMMANDS)[number], leaveOut?: string): string[] {
  const args = [...command.path];
  for (const unit of usageUnits(command.usage).slice(command.path.length)) {
    if (unit.optional || unit.positional || !unit.option || unit.option === leaveOut) continue;
    const spec = command.options[unit.option]!;
    args.push(`--${unit.option}`);
    if (spec.type === 'string') args.push(unit.choices?.[0] ?? 'x');
  }
  return args;
}

function expectUsageError(r: { code: number; stdout: string; stderr: string }, pattern: RegExp) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('admin --help', () => {
  it('`npm run admin -- --help` fits 80 columns and lists every command', () => {
    const run = spawnSync('npm', ['run', '--silent', 'admin', '--', '--help'], {
      cwd: PROJECT_ROOT,
      env: childEnv(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    for (const line of lines) expect(line.length, `over 80 columns: ${line}`).toBeLessThanOrEqual(80);
    for (const command of COMMANDS) expect(run.stdout).toContain(`  ${command.path.join(' ')} `);
  }, 60_000);

  it("each command's --help fits 80 columns and shows every option of its usage line", async () => {
    for (const command of COMMANDS) {
      const r = await admin([...command.path, '--help'], NOWHERE);
      expect(r.code).toBe(0);
      for (const line of r.stdout.split('\n')) expect(line.length, `${command.path.join(' ')} --help: ${line}`).toBeLessThanOrEqual(80);
      for (const unit of usageUnits(command.usage)) expect(r.stdout, command.usage).toContain(unit.text);
    }
  });

  it('every usage line names exactly the options the command takes', () => {
    for (const command of COMMANDS) {
      const named = usageUnits(command.usage).flatMap((u) => (u.option ? [u.option] : []));
      const taken = Object.keys(command.options).filter((name) => !command.positionals?.includes(name));
      expect(named.sort(), command.usage).toEqual(taken.sort());
    }
  });
});

describe('usage errors exit 2', () => {
  it.each([
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"; see npm run admin -- --help/],
    [
      'an unknown subcommand, with the commands of its group',
      ['clients', 'frob'],
      /unknown command "clients frob"; the "clients" commands are clients add, clients rotate-secret, clients list, clients validate, clients remove\./,
    ],
    [
      'a command without its subcommand, with the commands of its group',
      ['members'],
      /unknown command "members"; "members" needs a command: members add, members set-role, /,
    ],
    [
      'a mistyped command, with the nearest one',
      ['clinets', 'add', '--name', 'x'],
      /unknown command "clinets add"; did you mean "clients add"\? See npm run admin -- --help/,
    ],
    ['a mistyped subcommand, with the nearest one', ['users', 'reset-second-factr'], /did you mean "users reset-second-factor"\?/],
    ['a singular group name, with the nearest command', ['member', 'list'], /did you mean "members list"\?/],
    ['a mistyped one-word command', ['migrat'], /unknown command "migrat"; did you mean "migrate"\?/],
    ['an unknown option', ['orgs', 'list', '--colour', 'blue'], /Unknown option '--colour'/],
    ['an option without its value', ['orgs', 'list', '--kind'], /--kind/],
    ['an unexpected argument', ['migrate', 'now'], /Unexpected argument 'now'/],
    [
      'an unknown role',
      ['members', 'add', '--org', '12-3456789', '--email', 'a@example.org', '--role', 'boss'],
      /--role must be one of owner, admin, member, read_only/,
    ],
    [
      'an unknown environment',
      ['api-keys', 'create', '--org', '12-3456789', '--environment', 'staging'],
      /--environment must be production or sandbox/,
    ],
    [
      'an unknown organization kind',
      ['orgs', 'list', '--kind', 'charity'],
      /--kind must be one of nonprofit, fund_provider, grantmaker, platform, lockbox_provider/,
    ],
    ['an unknown key kind', ['keys', 'rotate', '--kind', 'tls'], /--kind must be signing or server/],
    ['an unknown delivery status', ['webhooks', 'deliveries', '--status', 'lost'], /--status must be one of pending, succeeded, failed/],
    [
      'an unknown grant frequency',
      [...requiredArgs(COMMANDS.find((c) => c.path.join(' ') === 'daf submit-grant-request')!), '--frequency', 'weekly'],
      /--frequency must be one of one_time/,
    ],
    ['a missing positional', ['webhooks', 'replay'], /<delivery id> is required/],
    ['a blank required value', ['members', 'list', '--org', ' '], /--org is required/],
  ])('%s, before any database is opened', async (_name, argv, pattern) => {
    const r = await admin(argv, NOWHERE);
    expectUsageError(r, pattern);
  });

  it('a missing required option, for every required option of every command, before any database is opened', async () => {
    let checked = 0;
    for (const command of COMMANDS) {
      for (const unit of usageUnits(command.usage).slice(command.path.length)) {
        if (unit.optional || !unit.option) continue;
        const r = await admin(requiredArgs(command, unit.option), NOWHERE);
        expectUsageError(r, new RegExp(`--${unit.option} is required.*usage: npm run admin -- ${command.path.join(' ')}`));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it.each([
    ['a malformed EIN', ['orgs', 'add', '--ein', '12-34', '--name', 'X'], '', /not an EIN/],
    [
      'a malformed e-mail address',
      ['users', 'add', '--email', 'not-an-address', '--password-stdin'],
      'long enough password\n',
      /not an email address/,
    ],
    ['a password too short', ['users', 'add', '--email', 'short@example.org', '--password-stdin'], 'short\n', /at least 10/],
    [
      'a password too short to reset',
      ['users', 'reset-password', '--email', 'short@example.org', '--password-stdin'],
      'short\n',
      /at least 10/,
    ],
    [
      'a count out of range',
      ['demo', 'seed', '--org', '12-3456789', '--environment', 'sandbox', '--donations', 'lots'],
      '',
      /--donations must be a whole number/,
    ],
    ['a limit out of range', ['mail', 'list', '--limit', '0'], '', /--limit must be 1 to 1000/],
    ['an audit limit out of range', ['audit', 'list', '--limit', '5000'], '', /--limit must be a whole number from 1 to 1000/],
    ['a date that is not ISO 8601', ['audit', 'list', '--since', 'yesterday'], '', /--since must be an ISO 8601 date/],
    [
      'a redirect URI with a query',
      [
        'clients',
        'add',
        '--environment',
        'production',
        '--name',
        'X',
        '--redirect-uri',
        'https://app.example.org/cb?x=1',
        '--scope',
        'read_only',
      ],
      '',
      /redirect_uris/,
    ],
    [
      'an unknown scope',
      ['clients', 'add', '--environment', 'production', '--name', 'X', '--redirect-uri', 'https://app.example.org/cb', '--scope', 'admin'],
      '',
      /scope/,
    ],
    [
      'a non-positive amount',
      [
        'daf',
        'submit-grant-request',
        '--fund-provider',
        '12-3456789',
        '--environment',
        'sandbox',
        '--email',
        'd@example.org',
        '--ein',
        '98-7654321',
        '--amount-cents',
        '0',
      ],
      '',
      /positive number of cents/,
    ],
  ])('a value the command cannot accept: %s', async (_name, argv, stdin, pattern) => {
    const r = await admin(argv, t.url, stdin);
    expectUsageError(r, pattern);
  });

  it('what is missing or already there in the data is not a usage error: exit 1', async () => {
    const r = await admin(['members', 'list', '--org', '99-9999999'], t.url);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/no organization with EIN 99-9999999/);
  });
});
