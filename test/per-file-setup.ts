import { afterAll, vi } from 'vitest';
import { removeTempDirs } from './helpers/temp-dirs.js';

// vitest runs this module before each test file, so its hook runs after the file's own. A worker
// runs several files in one module graph (vitest.config.ts, isolate: false): what one file
// changes in the process is undone here before the next.
afterAll(() => {
  removeTempDirs();
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});
