import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { tempDir } from './app.js';

/**
 * Where a page's screenshot goes: docs/<name> when the copies the docs show are being
 * refreshed (UPDATE_SCREENSHOTS=1), a temporary file otherwise.
 */
export function screenshotTarget(name: string): string {
  return process.env.UPDATE_SCREENSHOTS === '1' ? path.join(PROJECT_ROOT, 'docs', name) : path.join(tempDir('almoner-screenshot-'), name);
}

/** Takes the whole page's screenshot to `screenshotTarget(name)` and checks a PNG was written. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  const target = screenshotTarget(name);
  await page.screenshot({ path: target, fullPage: true });
  expect(fs.readFileSync(target).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
}
