// `npm test`'s pretest step: makes sure the browser tests (test/browser) have a Chromium.
//
// Nothing happens when one is there: CHROMIUM_PATH, Debian's /usr/bin/chromium, or the
// Chromium playwright-core installs (looked up in that order, as test/helpers/chromium.ts
// does). Otherwise it installs one: Debian's package when running as root on Debian, else
// playwright's own download. When neither can work it stops, before any test runs, with one
// line naming the command to run.
//
// `node scripts/ensure-chromium.mjs --dry-run` prints what it would do and does nothing.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const PLAYWRIGHT_INSTALL = 'npx playwright-core install --no-shell chromium';
const APT_INSTALL = 'apt-get update && apt-get install -y chromium';

/**
 * @typedef {object} Facts
 * @property {string | undefined} chromiumPathEnv  CHROMIUM_PATH, if set
 * @property {(file: string) => boolean} isExecutable
 * @property {string | undefined} playwrightChromium  where playwright-core's Chromium is (or would be) installed; undefined without playwright-core
 * @property {boolean} isRoot
 * @property {boolean} isDebian  /etc/debian_version exists
 * @property {boolean} hasAptGet  apt-get is on PATH
 */

/**
 * @typedef {{ action: 'none', chromium: string }
 *   | { action: 'apt', command: string }
 *   | { action: 'playwright', command: string }
 *   | { action: 'fail', message: string }} Decision
 */

/**
 * What to do, from what the machine has. Pure: every fact comes in through `facts`.
 * @param {Facts} facts
 * @returns {Decision}
 */
export function decide(facts) {
  if (facts.chromiumPathEnv) {
    if (facts.isExecutable(facts.chromiumPathEnv)) return { action: 'none', chromium: facts.chromiumPathEnv };
    // The tests would use it regardless of anything installed here: only the user can fix it.
    return {
      action: 'fail',
      message: `CHROMIUM_PATH is ${facts.chromiumPathEnv}, which is not an executable file: point it at a Chromium binary, or unset it`,
    };
  }
  if (facts.isExecutable(DEBIAN_CHROMIUM)) return { action: 'none', chromium: DEBIAN_CHROMIUM };
  if (facts.playwrightChromium && facts.isExecutable(facts.playwrightChromium))
    return { action: 'none', chromium: facts.playwrightChromium };
  if (facts.isRoot && facts.isDebian && facts.hasAptGet) return { action: 'apt', command: APT_INSTALL };
  if (facts.playwrightChromium) return { action: 'playwright', command: PLAYWRIGHT_INSTALL };
  return {
    action: 'fail',
    message: `no Chromium for the browser tests, and playwright-core is not installed to fetch one: run "npm ci", then "${PLAYWRIGHT_INSTALL}" (or, as root on Debian, "${APT_INSTALL}"), or set CHROMIUM_PATH`,
  };
}

/** @param {string} file */
function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** @param {string} command */
function onPath(command) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && isExecutable(path.join(dir, command)));
}

/** playwright-core's Chromium location (installed or not), or undefined when playwright-core is missing. */
async function playwrightChromium() {
  try {
    const { chromium } = await import('playwright-core');
    return chromium.executablePath();
  } catch {
    return undefined;
  }
}

/** @returns {Promise<Facts>} */
export async function gatherFacts() {
  return {
    chromiumPathEnv: process.env.CHROMIUM_PATH || undefined,
    isExecutable,
    playwrightChromium: await playwrightChromium(),
    isRoot: process.getuid?.() === 0,
    isDebian: fs.existsSync('/etc/debian_version'),
    hasAptGet: onPath('apt-get'),
  };
}

/**
 * Runs a command with its output shown (an install takes a while), returns whether it succeeded.
 * @param {string} command
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 */
function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  return result.status === 0;
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  process.stderr.write(`ensure-chromium: ${message}\n`);
  process.exit(1);
}

async function main() {
  const decision = decide(await gatherFacts());
  if (process.argv.includes('--dry-run')) {
    process.stdout.write(`${JSON.stringify(decision)}\n`);
    return;
  }
  switch (decision.action) {
    case 'none':
      return;
    case 'fail':
      return fail(decision.message);
    case 'apt': {
      process.stderr.write(`ensure-chromium: no Chromium for the browser tests; installing Debian's (${APT_INSTALL})\n`);
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      const installed = run('apt-get', ['update'], env) && run('apt-get', ['install', '-y', 'chromium'], env);
      if (!installed || !isExecutable(DEBIAN_CHROMIUM))
        fail(`installing Debian's chromium did not work (see above): run "${APT_INSTALL}" once it can, or set CHROMIUM_PATH`);
      return;
    }
    case 'playwright': {
      process.stderr.write(`ensure-chromium: no Chromium for the browser tests; installing playwright's (${PLAYWRIGHT_INSTALL})\n`);
      const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'playwright-core', 'cli.js');
      const installed = run(process.execPath, [cli, 'install', '--no-shell', 'chromium']);
      const chromium = await playwrightChromium();
      if (!installed || !chromium || !isExecutable(chromium))
        fail(`installing playwright's Chromium did not work (see above): run "${PLAYWRIGHT_INSTALL}" once it can, or set CHROMIUM_PATH`);
      // Downloaded, but a browser missing system libraries would fail every browser test.
      if (!run(chromium, ['--headless', '--no-sandbox', '--version'])) {
        fail(
          `playwright's Chromium (${chromium}) does not run here, probably for want of system libraries: run "sudo npx playwright-core install-deps chromium", or set CHROMIUM_PATH`,
        );
      }
      return;
    }
  }
}

// Run only as a script: the unit test imports decide() without side effects.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
