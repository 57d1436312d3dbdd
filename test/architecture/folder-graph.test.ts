import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The folders of src/ form no circle, at any depth (docs/layout.md, "Boundaries the linter
 * holds"): the module-level cycle rule sees circles between modules, this sees them between
 * folders, type imports included, so a feature that reaches into another one that reaches back
 * is caught even when no single module closes the circle. Each folder's children are held to it
 * too: its subfolders and its own files (named by the folder itself) import one another one way,
 * so `cli/` does not import `cli/commands/` that imports `cli/` back.
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

/** The folders a file is in, from src/ down ([] for src/main.ts and the like). */
const foldersOf = (file: string): string[] => path.relative(SRC, file).split(path.sep).slice(0, -1);

/** The import graphs of every folder's children, keyed by the folder ('' for src/ itself). */
type FolderGraphs = Map<string, Map<string, Set<string>>>;

/**
 * One import, one edge, in the graph of the deepest folder that holds both files: between the
 * child of that folder each file is in (a subfolder, or the folder itself for its own files).
 * The files directly in src/ (main.ts, app.ts, runtime.ts) compose the whole and are left out.
 */
function folderEdge(from: readonly string[], to: readonly string[]): { parent: string; from: string; to: string } | undefined {
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common++;
  if (common === from.length && common === to.length) return undefined;
  const parent = from.slice(0, common).join('/');
  const child = (folders: readonly string[]) => folders.slice(0, Math.min(folders.length, common + 1)).join('/');
  if (parent === '' && (from.length === 0 || to.length === 0)) return undefined;
  return { parent, from: child(from), to: child(to) };
}

/** The graphs of every folder's children, from pairs of folders: an importing file's and its import's. */
function graphsOf(imports: ReadonlyArray<readonly [readonly string[], readonly string[]]>): FolderGraphs {
  const graphs: FolderGraphs = new Map();
  for (const [from, to] of imports) {
    const edge = folderEdge(from, to);
    if (!edge) continue;
    const graph = graphs.get(edge.parent) ?? new Map<string, Set<string>>();
    graphs.set(edge.parent, graph);
    if (!graph.has(edge.from)) graph.set(edge.from, new Set());
    graph.get(edge.from)!.add(edge.to);
  }
  return graphs;
}

const folderGraphs = (files: readonly string[]): FolderGraphs =>
  graphsOf(
    files.flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(IMPORT)].map(
        (match) => [foldersOf(file), foldersOf(path.resolve(path.dirname(file), match[1]!))] as const,
      ),
    ),
  );

/**
 * The knots of a graph: each set of folders that all reach one another (its strongly connected
 * components, Tarjan's algorithm), so a circle however far round is found whole, with every
 * other circle through the same folders. Each knot is its folders, sorted; knots are sorted.
 */
function findKnots(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const knots: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const knot: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      knot.push(member);
    } while (member !== node);
    if (knot.length > 1) knots.push(knot.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return knots.sort((a, b) => a.join().localeCompare(b.join()));
}

/**
 * The knots of every folder's graph, each written `a ↔ b ↔ c: a → b, b → c, c → a` (its
 * folders, then the imports between them that tie it).
 */
const allKnots = (graphs: FolderGraphs): string[] =>
  [...graphs.keys()].sort().flatMap((parent) => {
    const graph = graphs.get(parent)!;
    return findKnots(graph).map((knot) => {
      const ties = knot.flatMap((from) =>
        [...(graph.get(from) ?? [])]
          .filter((to) => knot.includes(to))
          .sort()
          .map((to) => `${from} → ${to}`),
      );
      return `${knot.join(' ↔ ')}: ${ties.join(', ')}`;
    });
  });
/** A knot's folders, without the imports that tie it. */

describe('the folders of src/', () => {
  it('the check finds a circle between folders, however far round', () => {
    const edges = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(findKnots(edges)).toEqual([['a', 'b', 'c']]);
    expect(
      findKnots(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['c'])],
        ]),
      ),
    ).toEqual([]);
    // Two circles through one folder are one knot; a folder apart from it stays apart.
    const twoCircles = new Map([
      ['a', new Set(['b', 'c'])],
      ['b', new Set(['a'])],
      ['c', new Set(['a', 'd'])],
      ['e', new Set(['e'])],
    ]);
    expect(findKnots(twoCircles)).toEqual([['a', 'b', 'c']]);
  });

  it("the check places an import in the deepest folder holding both files, between that folder's children", () => {
    // Across top folders, from deep inside either: the top folders.
    expect(folderEdge(['gateway', 'daf'], ['accounts'])).toEqual({ parent: '', from: 'gateway', to: 'accounts' });
    // A subfolder and its parent's own files: the parent stands for its own files.
    expect(folderEdge(['cli', 'commands'], ['cli'])).toEqual({ parent: 'cli', from: 'cli/commands', to: 'cli' });
    expect(folderEdge(['cli'], ['cli', 'commands'])).toEqual({ parent: 'cli', from: 'cli', to: 'cli/commands' });
    // Two subfolders, however deep the files are in them.
    expect(folderEdge(['gateway', 'fdx', 'statements'], ['gateway', 'auth'])).toEqual({
      parent: 'gateway',
      from: 'gateway/fdx',
      to: 'gateway/auth',
    });
    // The same folder, and src/'s own files: no edge.
    expect(folderEdge(['db'], ['db'])).toBeUndefined();
    expect(folderEdge([], ['server'])).toBeUndefined();
    // A circle one level down is found in its folder's graph, and nowhere above it.
    const graphs = graphsOf([
      [['cli'], ['cli', 'commands']],
      [['cli', 'commands'], ['cli']],
      [['cli', 'commands'], ['db']],
    ]);
    expect(allKnots(graphs)).toEqual(['cli ↔ cli/commands: cli → cli/commands, cli/commands → cli']);
  });

  it('import one another in one direction only, at every depth: no circle', () => {
    const graphs = folderGraphs(sourceFiles(SRC));
    // The check reads the real imports, at the top (the authorization server uses the database)
    // and below it (the gateway's areas use its routing kit).
    expect(graphs.get('')?.get('oidc')?.has('db')).toBe(true);
    expect(graphs.get('gateway')?.get('gateway/fdx')?.has('gateway/routing')).toBe(true);
    expect(allKnots(graphs), 'a folder of src/ imports one that imports it back').toEqual([]);
  });
});
