import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { APACHE_BINARY, APACHE_MODULES, decide, PYTHON, type Facts } from '../../scripts/ensure-interop.mjs';

/**
 * `npm run test:interop`'s pre-step (scripts/ensure-interop.mjs): the decision as a pure
 * function, and the real script in its dry-run mode.
 */

const EVERYTHING = [APACHE_BINARY, `${APACHE_MODULES}/mod_auth_openidc.so`, PYTHON, '/usr/bin/curl'];

function facts(overrides: Partial<Facts> & { files?: string[]; modules?: string[] } = {}): Facts {
  const { files = EVERYTHING, modules = ['authlib', 'requests_oauthlib'], ...rest } = overrides;
  return {
    exists: (file) => files.includes(file),
    pythonHas: (module) => modules.includes(module),
    isRoot: false,
    isDebian: false,
    hasAptGet: false,
    ...rest,
  };
}

describe('deciding what the interop tests need installed', () => {
  it('does nothing when Apache, mod_auth_openidc, Python, curl, Authlib and requests-oauthlib are there', () => {
    expect(decide(facts())).toEqual({ action: 'none' });
  });

  it('installs exactly the missing Debian packages as root on Debian, apt-get update first', () => {
    const decision = decide(
      facts({
        files: [APACHE_BINARY, PYTHON, '/usr/bin/curl'],
        modules: ['requests_oauthlib'],
        isRoot: true,
        isDebian: true,
        hasAptGet: true,
      }),
    );
    expect(decision).toEqual({
      action: 'apt',
      packages: ['libapache2-mod-auth-openidc', 'python3-authlib'],
      command: 'apt-get update && apt-get install -y --no-install-recommends libapache2-mod-auth-openidc python3-authlib',
    });
  });

  it('counts the Python libraries as missing when Debian’s python3 is (another python3 on PATH does not see them)', () => {
    const decision = decide(
      facts({
        files: [APACHE_BINARY, `${APACHE_MODULES}/mod_auth_openidc.so`, '/usr/bin/curl'],
        modules: ['authlib', 'requests_oauthlib'],
        isRoot: true,
        isDebian: true,
        hasAptGet: true,
      }),
    );
    expect(decision).toMatchObject({ action: 'apt', packages: ['python3', 'python3-authlib', 'python3-requests-oauthlib'] });
  });

  it('stops with one line naming the command when it cannot install (not root)', () => {
    const decision = decide(facts({ files: [PYTHON, '/usr/bin/curl'], isDebian: true, hasAptGet: true }));
    expect(decision).toEqual({
      action: 'fail',
      message:
        'the interop tests need Apache httpd, mod_auth_openidc: run "sudo sh -c \'apt-get update && apt-get install -y --no-install-recommends apache2 libapache2-mod-auth-openidc\'" (Debian packages; elsewhere install their equivalents), then "npm run test:interop" again',
    });
    expect(decision).not.toHaveProperty('message', expect.stringContaining('\n'));
  });

  it('names the apt command without sudo off Debian, where only the equivalents can be installed', () => {
    const decision = decide(facts({ files: [], modules: [], isRoot: true }));
    expect(decision).toMatchObject({
      action: 'fail',
      message: expect.stringContaining(
        'run "apt-get update && apt-get install -y --no-install-recommends apache2 libapache2-mod-auth-openidc python3 curl python3-authlib python3-requests-oauthlib"',
      ),
    });
  });
});

describe('the script', () => {
  it('prints its decision and does nothing with --dry-run', () => {
    const result = spawnSync(process.execPath, ['scripts/ensure-interop.mjs', '--dry-run'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty('action', expect.stringMatching(/^(none|apt|fail)$/));
  });
});
