import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The folders of src/ form no circle (docs/layout.md, "Boundaries the linter holds"): eslint's
 * import-x/no-cycle sees circles between modules, this sees them between folders, type imports
 * included, so a feature that reaches into another one that reaches back is caught even when
 * no single module closes the circle.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.resolve(here, '../../src');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The top folder of src/ a file is in ('' for src/main.ts and the like). */
const folderOf = (file: string): string => {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : '';
};

function folderEdges(files: readonly string[]): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file);
    for (const match of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = folderOf(path.resolve(path.dirname(file), match[1]!));
      if (from === '' || to === '' || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** Every circle of the graph, as the folders around it (depth-first, each found from its first folder). */
function findCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const visit = (node: string, stack: string[]) => {
    const at = stack.indexOf(node);
    if (at >= 0) {
      cycles.push([...stack.slice(at), node]);
      return;
    }
    if (seen.has(node)) return;
    stack.push(node);
    for (const next of edges.get(node) ?? []) visit(next, stack);
    stack.pop();
    seen.add(node);
  };
  for (const node of [...edges.keys()].sort()) visit(node, []);
  return cycles;
}

describe('the folders of src/', () => {
  it('the check finds a circle between folders, however far round', () => {
    const edges = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(findCycles(edges)).toEqual([['a', 'b', 'c', 'a']]);
    expect(findCycles(new Map([['a', new Set(['b'])], ['b', new Set(['c'])]]))).toEqual([]);
  });

  it('import one another in one direction only: no circle', () => {
    const edges = folderEdges(sourceFiles(SRC));
    // The check reads the real imports (the authorization server uses the database).
    expect(edges.get('oidc')?.has('db')).toBe(true);
    expect(findCycles(edges), 'a folder of src/ imports one that imports it back').toEqual([]);
  });
});
