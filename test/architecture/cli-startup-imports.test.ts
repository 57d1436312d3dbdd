import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The admin CLI answers at once (docs/operations.md, "Admin CLI"): what `npm run admin --`
 * loads before it knows the command (src/cli/main.ts and its static imports) is Node's own
 * modules and a few small files of ours, no npm package. A command's services, the
 * configuration's schema (zod) and the database (kysely, pg) are imported when it runs.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.resolve(here, '../../src');
// `import … from '…'` and `export … from '…'`, but not `import type` / `export type`.
const STATIC_IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'/g;

/** The value imports of `file` (a path under src/), resolved: relative ones to .ts files, the rest as written. */
function staticImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(STATIC_IMPORT)].map((m) => {
    const specifier = (m[1] ?? m[2])!;
    return specifier.startsWith('.') ? path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts') : specifier;
  });
}

/** Every module reached from `entry` by static value imports. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (module: string) => {
    if (seen.has(module)) return;
    seen.add(module);
    if (module.startsWith('/')) staticImports(module).forEach(visit);
  };
  visit(entry);
  return seen;
}

describe('admin CLI start-up', () => {
  it('the check follows static imports and skips type-only ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-cli-imports-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'a.ts'),
        "import type { X } from 'zod';\nimport { b } from './b.js';\nexport const a = async () => (await import('kysely')).sql;\n",
      );
      fs.writeFileSync(path.join(dir, 'b.ts'), "import pg from 'pg';\nexport { c } from './c.js';\nexport const b = pg;\n");
      fs.writeFileSync(path.join(dir, 'c.ts'), "import 'node:fs';\nexport const c = 1;\n");
      const reached = [...closure(path.join(dir, 'a.ts'))].map((m) => (m.startsWith('/') ? path.basename(m) : m)).sort();
      expect(reached).toEqual(['a.ts', 'b.ts', 'c.ts', 'node:fs', 'pg']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/cli/main.ts loads no npm package before a command runs', () => {
    const reached = [...closure(path.join(SRC, 'cli/main.ts'))];
    const packages = reached.filter((m) => !m.startsWith('/') && !m.startsWith('node:'));
    expect(packages, 'import these inside the command that needs them (await import(…))').toEqual([]);
    const outside = reached
      .filter((m) => m.startsWith('/') && !m.startsWith(path.join(SRC, 'cli') + path.sep))
      .map((m) => path.relative(SRC, m));
    expect(outside.sort(), 'the few modules of src/ outside src/cli the CLI needs before a command runs').toEqual([
      'config/invocation-directory.ts',
      'embedded-postgres/tools.ts',
      'errors/domain-error.ts',
    ]);
  });
});
