import { parseArgs } from 'node:util';
import { DomainError } from '../errors/domain-error.js';
import type { AppConfig } from '../config/schema.js';
import type { Db } from '../db/database.js';
import { EmbeddedPostgresError } from '../embedded-postgres/tools.js';
import type { DatabaseLocation } from '../db/resolve.js';
import { CommandFailed, UsageError, type Command, type CommandContext, type OptionValues } from './commands/command.js';
import { COMMANDS } from './registry.js';
import { checkUsage, usageUnits, wrap } from './usage.js';
import { ClientsInvalid } from './commands/clients.js';

// What a command needs (the configuration's schema, the database, the services) is imported
// when it runs, so --help and a usage error answer without loading the server's modules, and a
// command loads only its own (docs/operations.md, "Admin CLI").

export interface CliIo {
  argv: readonly string[];
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env?: NodeJS.ProcessEnv;
  /** Where relative paths on the command line are resolved from (config/invocation-directory.ts); the process's by default. */
  cwd?: string;
}

const PREFIX = 'npm run admin --';

/** --help output is read in a terminal: every line fits 80 columns. */
export const HELP_WIDTH = 80;

function helpText(): string {
  const names = COMMANDS.map((c) => c.path.join(' '));
  const column = Math.max(...names.map((n) => n.length)) + 4;
  const indent = ' '.repeat(column);
  return [
    'Almoner admin CLI',
    '',
    `usage: ${PREFIX} <command> [options] [--json]`,
    '',
    'Commands:',
    ...COMMANDS.flatMap((c, i) => wrap(c.summary.split(' '), HELP_WIDTH, `  ${names[i]!.padEnd(column - 2)}`, indent)),
    '',
    ...wrap(
      `${PREFIX} <command> --help shows a command's options. Global options: --json (print exactly one JSON object), --help. Usage errors exit 2, other failures 1.`.split(
        ' ',
      ),
      HELP_WIDTH,
      '',
      '',
    ),
    '',
    ...wrap(
      "Uses DATABASE_URL when set, otherwise the embedded PostgreSQL in ALMONER_DATA_DIR (it joins a running server's cluster, or starts it for the command and stops it after).".split(
        ' ',
      ),
      HELP_WIDTH,
      '',
      '',
    ),
  ].join('\n');
}

function commandHelp(command: Command): string {
  const units = usageUnits(command.usage).map((u) => u.text);
  const first = `usage: ${PREFIX} `;
  return [...wrap(units, HELP_WIDTH, first, '    '), '', ...wrap(command.summary.split(' '), HELP_WIDTH, '  ', '  ')].join('\n');
}

function findCommand(words: readonly string[]): { command: Command; rest: string[] } | undefined {
  const candidates = [...COMMANDS].sort((a, b) => b.path.length - a.path.length);
  for (const command of candidates) {
    if (command.path.every((part, i) => words[i] === part)) return { command, rest: words.slice(command.path.length) };
  }
  return undefined;
}

/** One line, whatever the error: the CLI never prints a stack trace. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ').trim();
}

/** `error (<code>): <message>`: the stable code of the vocabulary, then what went wrong. */
function domainLine(error: DomainError): string {
  return `error (${error.code}): ${oneLine(error.message)}`;
}

/** Runs one admin command and returns the exit status. */
export async function runCli(io: CliIo): Promise<number> {
  const words = io.argv.filter((a) => a !== '--json' && a !== '--help' && a !== '-h');
  const json = io.argv.includes('--json');
  const help = io.argv.includes('--help') || io.argv.includes('-h');
  const found = findCommand(words);

  if (!found) {
    if (words.length === 0 || help) {
      io.stdout(`${helpText()}\n`);
      return words.length === 0 && !help ? 2 : 0;
    }
    // The command is the words before the first option; the options are not part of its name.
    const firstOption = words.findIndex((word) => word.startsWith('-'));
    const typed = firstOption > 0 ? words.slice(0, firstOption) : words;
    // Loaded for a mistyped command only, like everything a command needs (see the top of this file).
    const { unknownCommandHint } = await import('./suggest.js');
    const hint = unknownCommandHint(typed, COMMANDS);
    io.stderr(`almoner admin: unknown command "${typed.join(' ')}"; ${hint ? `${hint} See` : 'see'} ${PREFIX} --help\n`);
    // Exit 2 (a usage error) whether or not something was suggested: a script never runs a guess.
    return 2;
  }
  const { command, rest } = found;
  if (help) {
    io.stdout(`${commandHelp(command)}\n`);
    return 0;
  }

  let location: DatabaseLocation | undefined;
  let db: Db | undefined;
  try {
    let values: OptionValues;
    try {
      const parsed = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: Boolean(command.positionals) });
      values = parsed.values as OptionValues;
      if (parsed.positionals.length > (command.positionals?.length ?? 0))
        throw new UsageError(`unexpected argument ${parsed.positionals.at(-1)!}`);
      command.positionals?.forEach((name, i) => {
        if (parsed.positionals[i] !== undefined) values[name] = parsed.positionals[i];
      });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    // What the usage line says is checked before the command opens anything.
    checkUsage(command, values);
    const { loadConfig } = await import('../config/load.js');
    const config: AppConfig = loadConfig({ env: io.env });
    const ctx: CommandContext = {
      config,
      values,
      cwd: io.cwd ?? process.cwd(),
      readStdin: io.readStdin,
      async db() {
        if (db) return db;
        const [{ resolveDatabase }, { createDatabase }, { migrateToLatest }] = await Promise.all([
          import('../db/resolve.js'),
          import('../db/database.js'),
          import('../db/migrator.js'),
        ]);
        location = await resolveDatabase(config, 'if-started-here');
        db = createDatabase({ url: location.url, poolMax: 2, applicationName: 'almoner-admin' });
        // A fresh database is usable straight away: commands other than `migrate` bring it up to date first.
        if (command.path[0] !== 'migrate') await migrateToLatest(db);
        return db;
      },
    };
    const result = await command.run(ctx);
    io.stdout(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`almoner admin: ${oneLine(error.message)}; usage: ${PREFIX} ${command.usage}\n`);
      return 2;
    }
    if (error instanceof CommandFailed) {
      if (json) io.stdout(`${JSON.stringify(error.result.json)}\n`);
      io.stderr(`almoner admin: ${oneLine(error.result.text)}\n`);
      return 1;
    }
    if (error instanceof ClientsInvalid) {
      if (json) io.stdout(`${JSON.stringify({ valid: false, problems: error.problems })}\n`);
      io.stderr(`almoner admin: clients file invalid: ${oneLine(error.message)}\n`);
      return 1;
    }
    // A value the command cannot accept (a malformed EIN, e-mail or redirect URI) is a usage
    // error too; something missing or already there (not_found, conflict) is not.
    // A domain error names its code (src/errors/codes.ts), as the API's problem documents do.
    if (error instanceof DomainError && error.code === 'invalid') {
      io.stderr(`almoner admin: ${domainLine(error)}; usage: ${PREFIX} ${command.usage}\n`);
      return 2;
    }
    if (error instanceof DomainError) {
      io.stderr(`almoner admin: ${domainLine(error)}\n`);
      return 1;
    }
    // Loaded here, on the way out: a command that raised one of these has loaded its module already.
    const [{ ConfigError }, { ClientRegistryError }, { isDatabaseUnavailable }] = await Promise.all([
      import('../config/load.js'),
      import('../oidc/clients/schema.js'),
      import('../db/database.js'),
    ]);
    if (error instanceof EmbeddedPostgresError || error instanceof ClientRegistryError) {
      io.stderr(`almoner admin: ${oneLine(error.message)}\n`);
      return 1;
    }
    if (error instanceof ConfigError) {
      io.stderr(`almoner admin: ${oneLine(error.message)}\n`);
      return 2;
    }
    if (isDatabaseUnavailable(error)) {
      io.stderr(
        `almoner admin: cannot reach the database (${oneLine((error as Error).message || String((error as { code?: string }).code))})\n`,
      );
      return 1;
    }
    io.stderr(`almoner admin: ${oneLine((error as Error)?.message ?? String(error))}\n`);
    return 1;
  } finally {
    await db?.destroy().catch(() => undefined);
    await location?.release().catch(() => undefined);
  }
}
