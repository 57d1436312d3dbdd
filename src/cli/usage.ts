import { UsageError, type Command, type OptionValues } from './commands/command.js';

/**
 * A command's usage line is the one statement of its options: `--name <value>` is required,
 * `[--name <value>]` optional, `--name a|b|c` takes one of those values, `<what>` is a
 * positional. The CLI checks what it says before a command runs (a usage error, exit 2, with
 * no database opened), and wraps it for --help.
 */

export interface UsageUnit {
  /** The text as written, e.g. `[--kind nonprofit|fund_provider]` or `--redirect-uri <uri>...`. */
  text: string;
  optional: boolean;
  /** The option's name without dashes; undefined for a positional or a command word. */
  option?: string;
  /** For `--name a|b|c`: the values allowed. */
  choices?: string[];
  positional: boolean;
}

/** Splits on spaces outside [...] and <...>, then joins each --option with its value. */
export function usageUnits(usage: string): UsageUnit[] {
  const words: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of usage) {
    if (char === '[' || char === '<') depth++;
    if (char === ']' || char === '>') depth--;
    if (char === ' ' && depth === 0) {
      if (current) words.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (current) words.push(current);

  const units: UsageUnit[] = [];
  for (let i = 0; i < words.length; i++) {
    let text = words[i]!;
    const next = words[i + 1];
    if (text.startsWith('--') && next !== undefined && !next.startsWith('--') && !next.startsWith('[')) {
      text = `${text} ${next}`;
      i++;
    }
    units.push(describe(text));
  }
  return units;
}

function describe(text: string): UsageUnit {
  const optional = text.startsWith('[') && text.endsWith(']');
  const inner = optional ? text.slice(1, -1) : text;
  const match = /^--([a-z][a-z0-9-]*)(?: (.+))?$/.exec(inner);
  if (!match) return { text, optional, positional: inner.startsWith('<') };
  const value = match[2];
  const choices = value !== undefined && /^[a-z0-9_]+(\|[a-z0-9_]+)+$/.test(value) ? value.split('|') : undefined;
  return { text, optional, option: match[1], ...(choices ? { choices } : {}), positional: false };
}

function given(value: OptionValues[string]): boolean {
  if (Array.isArray(value)) return value.some((v) => v.trim() !== '');
  if (typeof value === 'string') return value.trim() !== '';
  return value === true;
}

function listed(choices: readonly string[]): string {
  return choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(', ')}`;
}

/** Throws a UsageError for the first required option or positional missing, or a value not among the choices. */
export function checkUsage(command: Command, values: OptionValues): void {
  let positional = 0;
  for (const unit of usageUnits(command.usage).slice(command.path.length)) {
    if (unit.positional) {
      const name = command.positionals?.[positional++];
      if (name && !unit.optional && !given(values[name])) throw new UsageError(`${unit.text} is required`);
      continue;
    }
    if (!unit.option) continue;
    const value = values[unit.option];
    if (!unit.optional && !given(value)) throw new UsageError(`--${unit.option} is required`);
    if (unit.choices && value !== undefined) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === 'string' && !unit.choices.includes(v))
          throw new UsageError(`--${unit.option} must be ${listed(unit.choices)} (not "${v}")`);
      }
    }
  }
}

/** Words of `text` in lines of at most `width` columns; continuation lines start with `indent`. */
export function wrap(words: readonly string[], width: number, first: string, indent: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of words) {
    const candidate = empty ? `${line}${word}` : `${line} ${word}`;
    if (!empty && candidate.length > width) {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = candidate;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}
