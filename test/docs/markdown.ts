import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * Just enough Markdown (CommonMark fences, ATX headings, inline links) to check the
 * documentation: which files there are, their fenced blocks, their headings' anchors as
 * GitHub makes them, and their relative links.
 */

/** README.md and every Markdown file under docs/, relative to the repository root. */
export function documentationFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name))
    .sort();
  return ['README.md', ...docs];
}

export interface FencedBlock {
  /** The info string after the opening fence, e.g. `sh runnable`. */
  info: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The fenced code blocks of a document, in order (a longer fence may contain shorter ones). */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j += 1) {
      const close = FENCE.exec(lines[j]!);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length && close[2]!.trim() === '') break;
      body.push(lines[j]!);
    }
    blocks.push({ info: open[2]!.trim(), line: i + 1, body: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The marker of a runnable example: the info string `sh runnable` (or `bash runnable`). */
export function isRunnable(block: FencedBlock): boolean {
  const words = block.info.split(/\s+/);
  return (words[0] === 'sh' || words[0] === 'bash') && words.slice(1).includes('runnable');
}

/**
 * The repository file a block lists whole, from its info string's `file=<path>` (e.g.
 * ```` ```js file=docs/examples/bank-data-walkthrough.mjs ````): renderers read only the first
 * word, and test/docs/included-files.test.ts holds the listing to the file.
 */
export function includedFile(block: FencedBlock): string | undefined {
  return block.info
    .split(/\s+/)
    .find((word) => word.startsWith('file='))
    ?.slice('file='.length);
}

/** The text outside fenced blocks (their lines blanked, so line numbers are kept). */
function withoutFences(text: string): string {
  const lines = text.split('\n');
  for (const block of fencedBlocks(text)) {
    const count = block.body === '' ? 1 : block.body.split('\n').length + 1;
    for (let k = block.line - 1; k < Math.min(lines.length, block.line + count); k += 1) lines[k] = '';
  }
  return lines.join('\n');
}

/** The text outside fenced blocks and inline code spans, line numbers kept. */
export function prose(text: string): string {
  return withoutFences(text).replace(/(`+)[^`]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

/** GitHub's anchor for a heading's text. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor the document's headings make, with GitHub's -1, -2 … for repeats. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of withoutFences(text).replace(/`/g, '').split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images outside code: `[text](target)`, `![alt](target "title")`. */
export function links(text: string): Link[] {
  const result: Link[] = [];
  prose(text)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) result.push({ target: match[1]!, line: index + 1 });
    });
  return result;
}

/**
 * What is wrong with the relative links of `file` (repository-relative): a missing file or
 * directory, or a `#anchor` no heading of the target Markdown file makes. External links
 * (a scheme such as https: or mailto:) are not fetched.
 */
export function brokenLinks(file: string, read: (file: string) => string | undefined = readRepoFile): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: cannot be read`];
  const problems: string[] = [];
  for (const { target, line } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = rawPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)));
    const where = `${file}:${line}: ${target}`;
    if (resolved.startsWith('..')) {
      problems.push(`${where}: points outside the repository`);
      continue;
    }
    const targetText = read(resolved);
    if (targetText === undefined && !isDirectory(resolved)) {
      problems.push(`${where}: ${resolved} does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!resolved.endsWith('.md') || targetText === undefined) {
      problems.push(`${where}: an anchor into ${resolved}, which is not a Markdown file`);
      continue;
    }
    if (!anchors(targetText).has(anchor)) problems.push(`${where}: ${resolved} has no heading with the anchor #${anchor}`);
  }
  return problems;
}

function readRepoFile(file: string): string | undefined {
  try {
    return fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  } catch {
    return undefined;
  }
}

function isDirectory(file: string): boolean {
  try {
    return fs.statSync(path.join(PROJECT_ROOT, file)).isDirectory();
  } catch {
    return false;
  }
}
