import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { findUnusedExports, type UnusedExport } from './export-usage.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('dead exports', () => {
  it('the check resolves symbols: a dead export and a local-only one are found, imports by type, re-export and namespace count as uses', () => {
    const found = findUnusedExports(path.join(here, 'fixtures/exports')).map(
      (u) => `${u.file}:${u.name}:${u.usedInFile ? 'local' : 'dead'}`,
    );
    expect(found.sort()).toEqual(['src/lib.ts:dead:dead', 'src/lib.ts:onlyLocal:local']);
  });

  describe('in this repository', () => {
    let unused: UnusedExport[];
    // One program over src, test, bench and scripts: several seconds of type checking.
    beforeAll(() => {
      unused = findUnusedExports(path.resolve(here, '../..'));
    }, 120_000);

    it('every export under src/ is used by another file or at least by its own', () => {
      const dead = unused.filter((u) => !u.usedInFile).map((u) => `${u.file}: ${u.name}`);
      expect(dead, 'delete these exports: nothing imports or uses them').toEqual([]);
    });
  });
});
