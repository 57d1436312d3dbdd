import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * What users read (README.md, docs/, the code's comments under src/, the pages under views/,
 * scripts/ and bench/) speaks of the product, never of the work items it was built in
 * ("issue 14 item 1", "issue 23's changes", "task 3"): a reader has none of them.
 */

const PLACES = ['README.md', 'docs', 'src', 'views', 'scripts', 'bench'];
const TEXT = /\.(md|ts|mjs|js|cjs|njk|html|css|json|txt|sql|ya?ml|sh)$/;

const WORK_ITEM_PHRASES: readonly RegExp[] = [/\b(?:issues?|tasks?|tickets?|work items?)\s*#?\d+/i, /\bissue['’]s\b/i, /\bwork items?\b/i];

function files(entry: string): string[] {
  const full = path.join(PROJECT_ROOT, entry);
  if (!fs.statSync(full).isDirectory()) return [entry];
  return fs
    .readdirSync(full, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(entry, name))
    .filter((name) => TEXT.test(name) && fs.statSync(path.join(PROJECT_ROOT, name)).isFile());
}

/** `file:line: text` for every line that names a work item. */
function workItemLines(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (WORK_ITEM_PHRASES.some((phrase) => phrase.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('no work items in user-facing text', () => {
  it("the check finds the phrases of work items and leaves the product's words alone", () => {
    const found = ['see issue 14 item 1', "issue 23's changes", 'done in task 3', 'Issue #7 asked for it', 'a work item of its own'].filter(
      (line) => workItemLines('x', line).length > 0,
    );
    expect(found).toHaveLength(5);
    for (const fine of [
      'FAPI 2.0 §5.3.2.1 item 9',
      '365 days from the first issue (iiat)',
      'what it issues works',
      'the providers issue tokens',
      'a support ticket',
      "logged with the task's name",
      'an issue counts once',
      'const issue = parsed.error.issues[0]!',
      'step 2 of the upgrade',
    ]) {
      expect(workItemLines('x', fine), fine).toEqual([]);
    }
  });

  it(`${PLACES.join(', ')} name no issue, task or work item`, () => {
    const lines = PLACES.flatMap(files).flatMap((file) => workItemLines(file, fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8')));
    expect(lines, 'speak of the product instead').toEqual([]);
  });
});
