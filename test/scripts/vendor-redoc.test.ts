import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRedocBundle, REDOC_CDN_LOGO } from '../../src/apps/redoc-bundle.js';
import { PROJECT_ROOT, REDOC_DIR } from '../../src/config/paths.js';
import { FILES, sha256, vendorFromTarball, type Manifest } from '../../scripts/vendor-redoc.js';
import { tempDir } from '../helpers/app.js';

/** The vendored Redoc bundle (vendor/redoc): what it is, that it is unchanged, and the script that refreshes it. */
const manifest = JSON.parse(fs.readFileSync(path.join(REDOC_DIR, 'manifest.json'), 'utf8')) as Manifest;
const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** A tarball laid out like the published redoc package (package/…), holding `files` (package path → content). */
function redocTarball(files: Record<string, string | Buffer>, name = 'redoc'): string {
  const dir = tempDir('almoner-redoc-package-');
  const write = (file: string, content: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(dir, 'package', file)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'package', file), content);
  };
  write('package.json', JSON.stringify({ name, version: manifest.version }));
  for (const [file, content] of Object.entries(files)) write(file, content);
  const tarball = path.join(dir, 'redoc.tgz');
  execFileSync('tar', ['-czf', tarball, '-C', dir, 'package']);
  return tarball;
}

describe('vendored Redoc bundle', () => {
  it('matches the SHA-256 the manifest records for its redoc version', () => {
    expect(manifest).toMatchObject({
      package: 'redoc',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      integrity: expect.stringMatching(/^sha512-[A-Za-z0-9+/]{86}==$/),
    });
    expect(Object.keys(manifest.files).sort()).toEqual(Object.keys(FILES).sort());
    for (const [name, recorded] of Object.entries(manifest.files)) {
      expect({ upstream: recorded.upstream, sha256: sha256(fs.readFileSync(path.join(REDOC_DIR, name))) }, name).toEqual(recorded);
    }
    // The README names the version vendored.
    expect(fs.readFileSync(path.join(REDOC_DIR, 'README.md'), 'utf8')).toContain(`Redoc ${manifest.version}.`);
  });

  it('keeps its licences: MIT for Redoc, the notices of what it bundles', () => {
    expect(fs.readFileSync(path.join(REDOC_DIR, 'LICENSE'), 'utf8')).toMatch(
      /^The MIT License \(MIT\)\s+Copyright \(c\) 2015-present, Rebilly, Inc\./,
    );
    expect(fs.readFileSync(path.join(REDOC_DIR, 'redoc.standalone.js.LICENSE.txt'), 'utf8')).toContain(`Version: "${manifest.version}"`);
  });

  it('is served without its one reference to another site, and redoc is no dependency of the project', () => {
    const vendored = fs.readFileSync(path.join(REDOC_DIR, 'redoc.standalone.js'), 'utf8');
    expect(vendored).toContain(REDOC_CDN_LOGO);
    const served = loadRedocBundle().toString('utf8');
    expect(served).not.toContain('cdn.redoc.ly');
    expect(served.length).toBeGreaterThan(vendored.length - 2 * REDOC_CDN_LOGO.length);
    expect(Object.keys(pkg.dependencies)).not.toContain('redoc');
    expect(Object.keys(pkg.devDependencies)).not.toContain('redoc');
  });

  it('is what the vendoring script makes of the published package', () => {
    const tarball = redocTarball(
      Object.fromEntries(Object.entries(FILES).map(([name, upstream]) => [upstream, fs.readFileSync(path.join(REDOC_DIR, name))])),
    );
    const out = tempDir('almoner-redoc-vendor-');
    const made = vendorFromTarball(tarball, out);
    // The integrity is that of the tarball it was given (this one is made here, not the registry's).
    expect({ ...made, integrity: manifest.integrity }).toEqual(manifest);
    expect(made.integrity).toMatch(/^sha512-/);
    for (const name of Object.keys(FILES))
      expect(fs.readFileSync(path.join(out, name)).equals(fs.readFileSync(path.join(REDOC_DIR, name))), name).toBe(true);
  });

  it('refuses a tarball that is not redoc, lacks a file, or whose bundle names the CDN beyond the logo', () => {
    const out = tempDir('almoner-redoc-vendor-');
    expect(() => vendorFromTarball(redocTarball({}, 'not-redoc'), out)).toThrow(
      /is not a redoc package \(its package.json names not-redoc\)/,
    );
    expect(() => vendorFromTarball(redocTarball({ LICENSE: 'MIT', 'bundles/redoc.standalone.js': '' }), out)).toThrow(
      `redoc ${manifest.version} has no bundles/redoc.standalone.js.LICENSE.txt`,
    );
    const complete = { LICENSE: 'MIT', 'bundles/redoc.standalone.js.LICENSE.txt': '' };
    expect(() =>
      vendorFromTarball(
        redocTarball({ ...complete, 'bundles/redoc.standalone.js': `a("${REDOC_CDN_LOGO}");b("https://cdn.redoc.ly/fonts.css")` }),
        out,
      ),
    ).toThrow(/names cdn.redoc.ly beyond the logo/);
    expect(fs.readdirSync(out)).toEqual([]);
    expect(
      vendorFromTarball(redocTarball({ ...complete, 'bundles/redoc.standalone.js': `a("${REDOC_CDN_LOGO}")` }), out).files[
        'redoc.standalone.js'
      ]!.sha256,
    ).toBe(sha256(Buffer.from(`a("${REDOC_CDN_LOGO}")`)));
  });
});
