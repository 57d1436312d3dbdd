import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A comment in src/ that says which test breaks without a rule ("Breaks without it:
 * test/oidc/x.test.ts ("the test's name")") points at a test that exists, and, where it quotes
 * the test's name, at a file that has a test of that name: a renamed or removed test leaves no
 * citation that leads nowhere.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

export interface Citation {
  file: string;
  /** The quoted test names after the path, if any ("a" / "b"). */
  names: string[];
}

/** The cited tests of a source text: its comments joined into one line each, so a citation may wrap. */
export function citationsIn(text: string): Citation[] {
  const flat = text.replace(/\n\s*(\*(?!\/)|\/\/)\s?/g, ' ').replace(/\s+/g, ' ');
  const citations: Citation[] = [];
  for (const match of flat.matchAll(/\b(test\/[\w./-]+\.test\.ts)(\s*\(((?:"[^"]*"\s*(?:\/\s*)?)+)\))?/g)) {
    const names = match[3] ? [...match[3].matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [];
    citations.push({ file: match[1]!, names });
  }
  return citations;
}

/** What is wrong with one citation: a missing file, or a quoted name the file does not contain. */
export function citationProblems(citation: Citation, read: (file: string) => string | undefined): string[] {
  const text = read(citation.file);
  if (text === undefined) return [`${citation.file} does not exist`];
  const flat = text.replace(/\s+/g, ' ');
  // A table's tests (it.each) are named by a template: 'match a redirect_uri with %s'.
  const templates = [...flat.matchAll(/'([^']*%[sdi][^']*)'/g)].map(
    (m) => new RegExp(`^${m[1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%[sdi]/g, '.+')}$`),
  );
  return citation.names
    .filter((name) => !flat.includes(name) && !templates.some((t) => t.test(name)))
    .map((name) => `${citation.file} has no test "${name}"`);
}

const readTest = (file: string) => {
  const full = path.join(ROOT, file);
  return fs.existsSync(full) ? fs.readFileSync(full, 'utf8') : undefined;
};

describe('tests cited in src/', () => {
  it('reads a wrapped citation with its quoted names, and finds a missing file and a missing name', () => {
    const text =
      '/**\n * Breaks without it: test/oidc/a.test.ts ("the first" /\n * "the second" / "the tabled one").\n */\n// see test/b.test.ts';
    const citations = citationsIn(text);
    expect(citations).toEqual([
      { file: 'test/oidc/a.test.ts', names: ['the first', 'the second', 'the tabled one'] },
      { file: 'test/b.test.ts', names: [] },
    ]);
    const files: Record<string, string> = { 'test/oidc/a.test.ts': "it('the first', () => {}); it.each([])('the %s one', () => {});" };
    expect(citations.flatMap((c) => citationProblems(c, (f) => files[f]))).toEqual([
      'test/oidc/a.test.ts has no test "the second"',
      'test/b.test.ts does not exist',
    ]);
  });

  it('every test a comment in src/ cites exists and has the quoted name', () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of sourceFiles(path.join(ROOT, 'src'))) {
      for (const citation of citationsIn(fs.readFileSync(file, 'utf8'))) {
        count++;
        for (const problem of citationProblems(citation, readTest)) problems.push(`${path.relative(ROOT, file)}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    // The walk found the citations there are (provider-internals.ts alone has several).
    expect(count).toBeGreaterThan(5);
  });
});
