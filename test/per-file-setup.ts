import { afterAll, vi } from 'vitest';
import { removeTempDirs } from './helpers/app.js';

// Runs before each test file. A worker runs several files in one module graph (vitest.config.ts,
// isolate: false), so what one file changes in the process is undone here, after its own hooks.
afterAll(() => {
  removeTempDirs();
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});
