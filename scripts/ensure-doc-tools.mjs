// `npm test`'s pretest step, after ensure-chromium: the runnable examples of README.md and docs/
// (test/docs/runnable-examples.test.ts) run in bash with curl, openssl and jq, as a reader
// would. Nothing happens when they are on the PATH; as root on Debian the missing ones are
// installed with apt-get; otherwise it stops, before any test, with one line naming the command.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Command → the Debian package that provides it. @type {Record<string, string>} */
export const TOOLS = { bash: 'bash', curl: 'curl', openssl: 'openssl', jq: 'jq' };

/**
 * What to do, from what the machine has. Pure: every fact comes in as an argument.
 * @param {{ missing: string[], isRoot: boolean, isDebian: boolean, hasAptGet: boolean }} facts
 * @returns {{ action: 'none' } | { action: 'apt', packages: string[] } | { action: 'fail', message: string }}
 */
export function decide({ missing, isRoot, isDebian, hasAptGet }) {
  if (missing.length === 0) return { action: 'none' };
  const packages = missing.map((tool) => TOOLS[tool] ?? tool);
  if (isRoot && isDebian && hasAptGet) return { action: 'apt', packages };
  return {
    action: 'fail',
    message: `the documentation's runnable examples need ${missing.join(', ')}: install them (on Debian or Ubuntu: "sudo apt-get install -y ${packages.join(' ')}")`,
  };
}

/** @param {string} command */
function onPath(command) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function main() {
  const decision = decide({
    missing: Object.keys(TOOLS).filter((tool) => !onPath(tool)),
    isRoot: process.getuid?.() === 0,
    isDebian: fs.existsSync('/etc/debian_version'),
    hasAptGet: onPath('apt-get'),
  });
  if (process.argv.includes('--dry-run')) return void process.stdout.write(`${JSON.stringify(decision)}\n`);
  if (decision.action === 'none') return;
  if (decision.action === 'fail') {
    process.stderr.write(`ensure-doc-tools: ${decision.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`ensure-doc-tools: installing ${decision.packages.join(', ')} for the documentation's runnable examples\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  /** @param {string[]} args */
  const ok = (args) => spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env }).status === 0;
  if (!(ok(['update']) && ok(['install', '-y', ...decision.packages]))) {
    process.stderr.write(`ensure-doc-tools: apt-get could not install ${decision.packages.join(' ')} (see above)\n`);
    process.exit(1);
  }
}

// Run only as a script: the unit test imports decide() without side effects.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main();
