import type { ParseArgsConfig } from 'node:util';
import type { AppConfig } from '../../config/schema.js';
import type { Db } from '../../db/database.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandContext {
  config: AppConfig;
  /** Opened lazily, so commands that need no database never start one. */
  db(): Promise<Db>;
  values: OptionValues;
  /** The directory the command was run from: relative paths on its command line are resolved from it. */
  cwd: string;
  readStdin(): Promise<string>;
}

export interface CommandResult {
  /** Printed as the one JSON object with --json. */
  json: Record<string, unknown>;
  /** Printed otherwise. */
  text: string;
}

export interface Command {
  path: readonly string[];
  summary: string;
  usage: string;
  options: OptionSpec;
  /** Positional arguments, by option name (e.g. `webhooks replay <id>`). */
  positionals?: readonly string[];
  run(ctx: CommandContext): Promise<CommandResult>;
}

/** Wrong words on the command line: exit status 2 and the usage line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command that ran and found something wrong (e.g. `ledger verify` on a broken ledger): exit
 * status 1, its JSON object printed as a success's would be with --json, and its text on stderr.
 */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
  constructor(readonly result: CommandResult) {
    super(result.text);
  }
}

export function requireString(values: OptionValues, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalString(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
