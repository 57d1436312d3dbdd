// `npm run test:interop`'s pre-step: makes sure the real relying parties the interop tests
// drive (test/interop) are installed: Apache httpd with mod_auth_openidc, Debian's Python 3 with
// Authlib and requests-oauthlib, and a Chromium (scripts/ensure-chromium.mjs).
//
// Nothing happens when they are there. Otherwise, as root on Debian, it installs Debian's
// packages (apt-get update, then apt-get install); elsewhere it stops, before any test runs,
// with one line naming the command to run.
//
// `node scripts/ensure-interop.mjs --dry-run` prints what it would do and does nothing.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const APACHE_BINARY = '/usr/sbin/apache2';
export const APACHE_MODULES = '/usr/lib/apache2/modules';
/** Debian's interpreter, which sees the python3-* packages (a python3 earlier on PATH, e.g. pyenv's, may not). */
export const PYTHON = '/usr/bin/python3';

/** What each test needs, and the Debian package that brings it. */
export const REQUIREMENTS = [
  { what: 'Apache httpd', package: 'apache2', file: APACHE_BINARY },
  { what: 'mod_auth_openidc', package: 'libapache2-mod-auth-openidc', file: `${APACHE_MODULES}/mod_auth_openidc.so` },
  { what: 'Python 3', package: 'python3', file: PYTHON },
  { what: 'curl', package: 'curl', file: '/usr/bin/curl' },
  { what: 'Authlib', package: 'python3-authlib', pythonModule: 'authlib' },
  { what: 'requests-oauthlib', package: 'python3-requests-oauthlib', pythonModule: 'requests_oauthlib' },
];

/**
 * @typedef {object} Facts
 * @property {(file: string) => boolean} exists
 * @property {(module: string) => boolean} pythonHas  whether Debian's python3 imports the module
 * @property {boolean} isRoot
 * @property {boolean} isDebian  /etc/debian_version exists
 * @property {boolean} hasAptGet  apt-get is on PATH
 */

/**
 * @typedef {{ action: 'none' }
 *   | { action: 'apt', packages: string[], command: string }
 *   | { action: 'fail', message: string }} Decision
 */

/** @param {string[]} packages */
export const aptCommand = (packages) => `apt-get update && apt-get install -y --no-install-recommends ${packages.join(' ')}`;

/**
 * What to do, from what the machine has. Pure: every fact comes in through `facts`.
 * @param {Facts} facts
 * @returns {Decision}
 */
export function decide(facts) {
  const pythonThere = facts.exists(PYTHON);
  const missing = REQUIREMENTS.filter((r) =>
    'file' in r && r.file ? !facts.exists(r.file) : !pythonThere || !facts.pythonHas(r.pythonModule ?? ''),
  );
  if (missing.length === 0) return { action: 'none' };
  const packages = missing.map((r) => r.package);
  const command = aptCommand(packages);
  if (facts.isRoot && facts.isDebian && facts.hasAptGet) return { action: 'apt', packages, command };
  const what = missing.map((r) => r.what).join(', ');
  return {
    action: 'fail',
    message: `the interop tests need ${what}: run "${facts.isDebian ? `sudo sh -c '${command}'` : command}" (Debian packages; elsewhere install their equivalents), then "npm run test:interop" again`,
  };
}

/** @param {string} file */
function exists(file) {
  return fs.existsSync(file);
}

/** @param {string} module */
function pythonHas(module) {
  return spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
}

/** @param {string} command */
function onPath(command) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && fs.existsSync(path.join(dir, command)));
}

/** @returns {Facts} */
export function gatherFacts() {
  return {
    exists,
    pythonHas,
    isRoot: process.getuid?.() === 0,
    isDebian: fs.existsSync('/etc/debian_version'),
    hasAptGet: onPath('apt-get'),
  };
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  process.stderr.write(`ensure-interop: ${message}\n`);
  process.exit(1);
}

function main() {
  const decision = decide(gatherFacts());
  if (process.argv.includes('--dry-run')) {
    process.stdout.write(`${JSON.stringify(decision)}\n`);
    return;
  }
  if (decision.action === 'fail') fail(decision.message);
  if (decision.action === 'apt') {
    process.stderr.write(`ensure-interop: installing what the interop tests need (${decision.command})\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const run = (/** @type {string[]} */ args) => spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env }).status === 0;
    const installed = run(['update']) && run(['install', '-y', '--no-install-recommends', ...decision.packages]);
    const after = decide(gatherFacts());
    if (!installed || after.action !== 'none')
      fail(`installing ${decision.packages.join(' ')} did not work (see above): run "${decision.command}" once it can`);
  }
  // The Apache test drives Chromium: the same provisioning as `npm test`.
  const chromium = spawnSync(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'ensure-chromium.mjs')], {
    stdio: 'inherit',
  });
  if (chromium.status !== 0) process.exit(chromium.status ?? 1);
}

// Run only as a script: the unit test and the interop helpers import it without side effects.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main();
