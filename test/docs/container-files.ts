import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * Just enough of Dockerfile and .dockerignore syntax to check the repository's own files
 * (docs/operations.md, "Docker and compose"): stages, their instructions with continuation
 * lines joined, COPY sources and destinations, exec-form arguments, ENV pairs, and which
 * paths of the build context .dockerignore leaves out.
 */

export interface Instruction {
  keyword: string;
  args: string;
  /** 1-based line where the instruction starts. */
  line: number;
}

export interface Stage {
  /** The image of its FROM line. */
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** The stages of a Dockerfile, each with its instructions after FROM (comments and blank lines dropped). */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const start = i;
    let current = lines[i]!;
    if (/^\s*(#|$)/.test(current)) continue;
    // A trailing backslash continues the instruction; comment lines inside it are skipped.
    while (/\\\s*$/.test(current) && i + 1 < lines.length) {
      i += 1;
      if (/^\s*#/.test(lines[i]!)) continue;
      current = `${current.replace(/\\\s*$/, '')} ${lines[i]!.trim()}`;
    }
    const match = /^\s*(\S+)\s*(.*)$/.exec(current)!;
    const instruction: Instruction = { keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: start + 1 };
    if (instruction.keyword === 'FROM') {
      const from = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!from) throw new Error(`line ${instruction.line}: cannot read FROM ${instruction.args}`);
      stages.push({ from: from[1]!, name: from[2], instructions: [] });
      continue;
    }
    if (stages.length === 0) {
      if (instruction.keyword === 'ARG') continue;
      throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
    }
    stages.at(-1)!.instructions.push(instruction);
  }
  return stages;
}

/** The arguments of an exec-form instruction (`["node", "x.js"]`), or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) throw new Error(`not an exec form: ${args}`);
  return parsed as string[];
}

export interface Copy {
  line: number;
  /** The stage of --from, or undefined for the build context. */
  from: string | undefined;
  sources: string[];
  destination: string;
}

/** A COPY (or ADD) instruction's flags, sources and destination. */
export function parseCopy(instruction: Instruction): Copy {
  let rest = instruction.args;
  let from: string | undefined;
  for (let flag = /^--(\S+?)(?:=(\S+))?\s+/.exec(rest); flag; flag = /^--(\S+?)(?:=(\S+))?\s+/.exec(rest)) {
    if (flag[1] === 'from') from = flag[2];
    rest = rest.slice(flag[0].length);
  }
  const parts = execForm(rest) ?? rest.split(/\s+/);
  if (parts.length < 2) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
  return { line: instruction.line, from, sources: parts.slice(0, -1), destination: parts.at(-1)! };
}

/** The variables an ENV instruction sets (`ENV A=1 B="two words"`; the old `ENV A 1` form too). */
export function parseEnv(args: string): Record<string, string> {
  const result: Record<string, string> = {};
  if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(args)) {
    const [name, ...value] = args.split(/\s+/);
    result[name!] = value.join(' ');
    return result;
  }
  for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const raw = match[2]!;
    result[match[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return result;
}

/** Where a COPY puts one of its sources, relative to `workdir` when the destination is relative. */
export function copyTarget(copy: Copy, source: string, workdir: string): string {
  const intoDirectory = copy.destination.endsWith('/') || copy.sources.length > 1;
  const destination = path.posix.resolve(workdir, copy.destination);
  return intoDirectory ? path.posix.join(destination, path.posix.basename(source)) : destination;
}

/** The stage's working directory at the end (the last WORKDIR; `/` without one). */
export function workdirOf(stage: Stage): string {
  let workdir = '/';
  for (const instruction of stage.instructions)
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
  return workdir;
}

/** Every ENV of a stage, later ones winning. */
export function envOf(stage: Stage): Record<string, string> {
  return Object.assign({}, ...stage.instructions.filter((i) => i.keyword === 'ENV').map((i) => parseEnv(i.args))) as Record<string, string>;
}

/** The last instruction of a kind in a stage (CMD, USER, HEALTHCHECK: the last one counts). */
export function lastOf(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1);
}

function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A pattern that names a directory leaves out everything under it.
  return new RegExp(`^${source}(?:/.*)?$`);
}

/**
 * Whether .dockerignore's rules leave `file` (relative to the context root) out of the build
 * context: the last matching rule wins, `!` rules bring a path back.
 */
export function isIgnored(file: string, dockerignore: string): boolean {
  const target = path.posix.normalize(file).replace(/^\.\//, '').replace(/\/$/, '');
  let ignored = false;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = path.posix
      .normalize((negated ? line.slice(1) : line).trim())
      .replace(/^\/+/, '')
      .replace(/\/$/, '');
    if (globToRegExp(pattern).test(target)) ignored = !negated;
  }
  return ignored;
}

/**
 * What is wrong with the build-context COPY instructions of a Dockerfile: a source that does
 * not exist in the repository, or one .dockerignore leaves out of the context (either fails
 * `docker build`), or a --from naming no earlier stage.
 */
export function copyProblems(stages: Stage[], dockerignore: string, exists: (file: string) => boolean = repoPathExists): string[] {
  const problems: string[] = [];
  stages.forEach((stage, index) => {
    for (const instruction of stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
      const copy = parseCopy(instruction);
      if (copy.from !== undefined) {
        if (!stages.slice(0, index).some((earlier) => earlier.name === copy.from))
          problems.push(`line ${copy.line}: --from=${copy.from} names no earlier stage`);
        continue;
      }
      for (const source of copy.sources) {
        if (!exists(source)) problems.push(`line ${copy.line}: ${source} does not exist`);
        else if (isIgnored(source, dockerignore)) problems.push(`line ${copy.line}: ${source} is excluded by .dockerignore`);
      }
    }
  });
  return problems;
}

function repoPathExists(file: string): boolean {
  return fs.existsSync(path.join(PROJECT_ROOT, file));
}
