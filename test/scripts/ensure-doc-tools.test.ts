import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { decide } from '../../scripts/ensure-doc-tools.mjs';

/** `npm test`'s pretest step for the runnable examples' tools (scripts/ensure-doc-tools.mjs). */
describe('making sure the runnable examples have bash, curl, openssl and jq', () => {
  it('does nothing when none is missing', () => {
    expect(decide({ missing: [], isRoot: true, isDebian: true, hasAptGet: true })).toEqual({ action: 'none' });
  });

  it('installs the missing packages with apt-get as root on Debian', () => {
    expect(decide({ missing: ['jq', 'openssl'], isRoot: true, isDebian: true, hasAptGet: true })).toEqual({
      action: 'apt',
      packages: ['jq', 'openssl'],
    });
  });

  it('otherwise stops with one line naming what is missing and the command', () => {
    const decision = decide({ missing: ['jq'], isRoot: false, isDebian: true, hasAptGet: true });
    expect(decision).toEqual({
      action: 'fail',
      message: 'the documentation\'s runnable examples need jq: install them (on Debian or Ubuntu: "sudo apt-get install -y jq")',
    });
  });

  it('as a script on this machine it finds them all (the test run needs them) and does nothing', () => {
    const result = spawnSync(process.execPath, ['scripts/ensure-doc-tools.mjs', '--dry-run'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ action: 'none' });
  });
});
