import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// ALMONER_TEST_REPORT=<file> adds vitest's JSON report (CI reads it for its closing line and to
// fail a run that ran no test); `npm run check` gives no way to pass reporter flags through.
const jsonReport = process.env.ALMONER_TEST_REPORT;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real-client tests need Apache and Python packages: `npm run test:interop` (vitest.interop.config.ts).
    exclude: [...configDefaults.exclude, 'test/interop/**'],
    globalSetup: ['test/global-setup.ts'],
    // Files share their worker's module graph, so the server's modules load once per worker
    // rather than once per file; test/per-file-setup.ts undoes what a file changes (docs/testing.md).
    setupFiles: ['test/per-file-setup.ts'],
    pool: 'forks',
    isolate: false,
    // A guard against hangs, not a speed check: the slowest tests (a real server started on
    // embedded PostgreSQL, the docs' runnable blocks) take 15-22 s on a slow shared host.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database cloned from a migrated template (test/helpers/database.ts).
    fileParallelism: true,
    // vitest's default is one worker fewer than the cores: one file at a time on a 2-core
    // machine. A file spends most of its time waiting on PostgreSQL and on the servers and
    // Chromium it drives, so three files at a time keep two cores busy. VITEST_MAX_WORKERS
    // (vitest's own variable) still overrides it.
    maxWorkers: Math.max(3, os.availableParallelism() - 1),
    ...(jsonReport ? { reporters: ['default', 'json'], outputFile: { json: jsonReport } } : {}),
  },
});
