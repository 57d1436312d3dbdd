import { defineConfig } from 'vitest/config';

// `npm run test:interop`: the tests that drive real relying parties (Apache's mod_auth_openidc,
// Python's Authlib and requests-oauthlib, oauth4webapi). They need system packages, which
// scripts/ensure-interop.mjs provides first, so they stay out of `npm test` (vitest.config.ts).
const jsonReport = process.env.ALMONER_TEST_REPORT;

export default defineConfig({
  test: {
    include: ['test/interop/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    ...(jsonReport ? { reporters: ['default', 'json'], outputFile: { json: jsonReport } } : {}),
  },
});
