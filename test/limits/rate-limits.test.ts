import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { rateLimits } from '../../src/limits/rate-limits.js';

/**
 * One vocabulary for the rate limits: docs/security.md ("Rate limits") lists every limit of
 * src/limits/rate-limits.ts under its name there, with the same max, window and store.
 */

function window(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  return `${seconds / 60} min`;
}

function documentedRows(): Map<string, string[]> {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'security.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Rate limits\n'), text.indexOf('\n## ', text.indexOf('\n## Rate limits\n') + 1));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const match = /^\| `(\w+)` \|(.*)\|$/.exec(line);
    if (match)
      rows.set(
        match[1]!,
        match[2]!.split(' | ').map((cell) => cell.trim()),
      );
  }
  return rows;
}

describe('the rate limits', () => {
  it('are each documented once, under the name the code gives them, with their numbers and store', () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(rateLimits).sort());
    for (const [name, limit] of Object.entries(rateLimits)) {
      const [, max, windowText, store] = rows.get(name)!;
      expect({ name, max, window: windowText, store }).toEqual({
        name,
        max: String(limit.max),
        window: window(limit.windowSeconds),
        store: limit.store === 'process memory' ? 'process memory' : `\`${limit.store}\``,
      });
    }
  });

  it('name each stored key prefix once', () => {
    const prefixes = Object.values(rateLimits).flatMap((limit) => ('name' in limit ? [`${limit.store}:${limit.name}`] : []));
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});
