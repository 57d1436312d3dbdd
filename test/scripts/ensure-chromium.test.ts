import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { decide, DEBIAN_CHROMIUM, type Facts } from '../../scripts/ensure-chromium.mjs';

/**
 * `npm test`'s pretest step (scripts/ensure-chromium.mjs): the decision as a pure function,
 * and the real script only where it cannot install anything (CHROMIUM_PATH set).
 */

const PLAYWRIGHT = '/home/u/.cache/ms-playwright/chromium-1255/chrome-linux64/chrome';

function facts(overrides: Partial<Facts> & { executables?: string[] } = {}): Facts {
  const { executables = [], ...rest } = overrides;
  return {
    chromiumPathEnv: undefined,
    isExecutable: (file) => executables.includes(file),
    playwrightChromium: PLAYWRIGHT,
    isRoot: false,
    isDebian: false,
    hasAptGet: false,
    ...rest,
  };
}

describe('deciding how to get a Chromium', () => {
  it('does nothing when CHROMIUM_PATH names an executable, even with nothing else around', () => {
    expect(
      decide(
        facts({
          chromiumPathEnv: '/opt/chrome/chrome',
          executables: ['/opt/chrome/chrome'],
          isRoot: true,
          isDebian: true,
          hasAptGet: true,
        }),
      ),
    ).toEqual({
      action: 'none',
      chromium: '/opt/chrome/chrome',
    });
  });

  it('stops with one line when CHROMIUM_PATH names nothing runnable, rather than installing a browser the tests would not use', () => {
    const decision = decide(
      facts({ chromiumPathEnv: '/nowhere/chrome', executables: [DEBIAN_CHROMIUM], isRoot: true, isDebian: true, hasAptGet: true }),
    );
    expect(decision).toEqual({
      action: 'fail',
      message: 'CHROMIUM_PATH is /nowhere/chrome, which is not an executable file: point it at a Chromium binary, or unset it',
    });
  });

  it("does nothing when Debian's /usr/bin/chromium is there", () => {
    expect(decide(facts({ executables: [DEBIAN_CHROMIUM], isRoot: true, isDebian: true, hasAptGet: true }))).toEqual({
      action: 'none',
      chromium: '/usr/bin/chromium',
    });
  });

  it("does nothing when playwright's Chromium is already installed", () => {
    expect(decide(facts({ executables: [PLAYWRIGHT], isRoot: true, isDebian: true, hasAptGet: true }))).toEqual({
      action: 'none',
      chromium: PLAYWRIGHT,
    });
  });

  it("installs Debian's chromium as root on Debian with apt-get", () => {
    expect(decide(facts({ isRoot: true, isDebian: true, hasAptGet: true }))).toEqual({
      action: 'apt',
      command: 'apt-get update && apt-get install -y chromium',
    });
  });

  it("uses playwright's installer when apt cannot be used: not root, not Debian, or no apt-get", () => {
    const playwright = { action: 'playwright', command: 'npx playwright-core install --no-shell chromium' };
    expect(decide(facts({ isRoot: false, isDebian: true, hasAptGet: true }))).toEqual(playwright);
    expect(decide(facts({ isRoot: true, isDebian: false, hasAptGet: true }))).toEqual(playwright);
    expect(decide(facts({ isRoot: true, isDebian: true, hasAptGet: false }))).toEqual(playwright);
  });

  it('stops with one line naming the commands when neither installer can work', () => {
    const decision = decide(facts({ playwrightChromium: undefined }));
    expect(decision.action).toBe('fail');
    const message = decision.action === 'fail' ? decision.message : '';
    expect(message).not.toContain('\n');
    expect(message).toContain('run "npm ci", then "npx playwright-core install --no-shell chromium"');
    expect(message).toContain('or set CHROMIUM_PATH');
  });
});

describe('the pretest script', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });

  function runScript(env: NodeJS.ProcessEnv) {
    return spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'ensure-chromium.mjs')], {
      cwd: PROJECT_ROOT,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
  }

  it('is what `npm test` (and so `npm test -- <files>` and `npm run check`) runs first', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.pretest).toBe('node scripts/ensure-chromium.mjs && node scripts/ensure-doc-tools.mjs');
    expect(scripts.check).toMatch(/&& npm test$/);
  });

  it('exits non-zero with exactly one line on stderr when CHROMIUM_PATH names nothing, installing nothing', () => {
    // No apt-get and no way to reach one: even a wrong decision could not install anything.
    const result = runScript({ ...process.env, CHROMIUM_PATH: '/nowhere/chromium', PATH: path.dirname(process.execPath) });
    expect(result.status, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'ensure-chromium: CHROMIUM_PATH is /nowhere/chromium, which is not an executable file: point it at a Chromium binary, or unset it\n',
    );
  });

  it('does nothing, silently, when CHROMIUM_PATH names an executable', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-chromium-'));
    made.push(dir);
    const fake = path.join(dir, 'chromium');
    fs.writeFileSync(fake, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const result = runScript({ ...process.env, CHROMIUM_PATH: fake, PATH: path.dirname(process.execPath) });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
