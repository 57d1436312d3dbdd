import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A worker runs many test files in one module graph (vitest.config.ts, isolate: false), so a
 * module other than a test file is evaluated once per worker: a hook it registers as it loads
 * would run for the first file that imports it and never again. Helpers register hooks inside
 * the function a test calls (useChromium(), useOAuthServer()); test/per-file-setup.ts is the
 * one module that vitest itself runs before each file.
 */
const testRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PER_FILE_SETUP = 'per-file-setup.ts';
const HOOKS = /^(?:afterAll|beforeAll|afterEach|beforeEach)\s*\(/m;

/** Modules under test/ that a test file imports: every .ts, .mts and .mjs file that is not a test itself. */
function helperModules(): string[] {
  return fs
    .readdirSync(testRoot, { recursive: true, encoding: 'utf8' })
    .map((name) => name.split(path.sep).join('/'))
    .filter((name) => /\.(?:ts|mts|mjs)$/.test(name) && !/\.test\.ts$/.test(name))
    .filter((name) => name !== PER_FILE_SETUP && !name.includes('/fixtures/'));
}

/** The helper modules among `files` that register a hook at their top level (a line starting with one). */
export function moduleLevelHooks(files: { name: string; text: string }[]): string[] {
  return files.filter((file) => HOOKS.test(file.text)).map((file) => file.name);
}

describe('test helpers', () => {
  it('register no hook as their module loads, only inside the functions tests call', () => {
    const files = helperModules().map((name) => ({ name, text: fs.readFileSync(path.join(testRoot, name), 'utf8') }));
    expect(files.map((file) => file.name)).toContain('helpers/chromium.ts');
    expect(moduleLevelHooks(files)).toEqual([]);
  });

  it('the check finds a top-level hook and passes one inside a function', () => {
    expect(
      moduleLevelHooks([
        { name: 'helpers/leaky.ts', text: "import { afterAll } from 'vitest';\nafterAll(() => cleanUp());\n" },
        { name: 'helpers/fixture.ts', text: 'export function useThing() {\n  afterAll(() => cleanUp());\n}\n' },
      ]),
    ).toEqual(['helpers/leaky.ts']);
  });
});
