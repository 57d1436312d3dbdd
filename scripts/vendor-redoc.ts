/**
 * Vendors Redoc's self-contained browser build, which the API reference page serves
 * (src/apps/api-reference.ts, docs/api.md):
 *
 *   npm run redoc:vendor -- [<version>]      the version defaults to the one vendored now
 *
 * Fetches the published package with `npm pack redoc@<version>` (a download: nothing is
 * installed, no script runs) and copies from it, byte for byte, into vendor/redoc/: the bundle
 * (bundles/redoc.standalone.js), the licence notices of the libraries it bundles, and Redoc's
 * LICENSE. manifest.json records the version, the tarball's integrity (as the registry gives
 * it) and each file's SHA-256, so the copy can be checked against the registry. Redoc is not a
 * dependency of the project: a bundle for browsers needs none of its ~100 Node packages.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REDOC_CDN_LOGO } from '../src/apps/redoc-bundle.js';
import { PROJECT_ROOT, REDOC_DIR } from '../src/config/paths.js';

/** Vendored file → its path in the published package. */
export const FILES: Record<string, string> = {
  'redoc.standalone.js': 'bundles/redoc.standalone.js',
  'redoc.standalone.js.LICENSE.txt': 'bundles/redoc.standalone.js.LICENSE.txt',
  LICENSE: 'LICENSE',
};

export interface Manifest {
  package: 'redoc';
  version: string;
  /** The tarball's Subresource Integrity string, the registry's `dist.integrity`. */
  integrity: string;
  files: Record<string, { upstream: string; sha256: string }>;
}

export const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** Copies the files from a redoc package tarball (.tgz) into `outDir` and writes its manifest.json. */
export function vendorFromTarball(tarball: string, outDir = REDOC_DIR): Manifest {
  const unpacked = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-redoc-'));
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked], { stdio: ['ignore', 'ignore', 'pipe'] });
    const root = path.join(unpacked, 'package');
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: string; version?: string };
    if (pkg.name !== 'redoc' || typeof pkg.version !== 'string')
      throw new Error(`${tarball} is not a redoc package (its package.json names ${String(pkg.name)})`);
    const missing = Object.values(FILES).filter((file) => !fs.existsSync(path.join(root, file)));
    if (missing.length > 0) throw new Error(`redoc ${pkg.version} has no ${missing.join(', ')}`);
    const bundle = fs.readFileSync(path.join(root, FILES['redoc.standalone.js']!), 'utf8');
    if (bundle.replaceAll(REDOC_CDN_LOGO, '').includes('cdn.redoc.ly')) {
      throw new Error(
        `redoc ${pkg.version}'s bundle names cdn.redoc.ly beyond the logo that src/apps/api-reference.ts rewrites: the page would ask another origin`,
      );
    }
    const manifest: Manifest = {
      package: 'redoc',
      version: pkg.version,
      integrity: `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`,
      files: {},
    };
    fs.mkdirSync(outDir, { recursive: true });
    for (const [name, upstream] of Object.entries(FILES)) {
      const bytes = fs.readFileSync(path.join(root, upstream));
      fs.writeFileSync(path.join(outDir, name), bytes);
      manifest.files[name] = { upstream, sha256: sha256(bytes) };
    }
    fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } finally {
    fs.rmSync(unpacked, { recursive: true, force: true });
  }
}

/** Downloads redoc@<version>'s tarball into `dir` with npm pack; its path, checked against the integrity npm reports. */
function packRedoc(version: string, dir: string): string {
  const output = execFileSync('npm', ['pack', `redoc@${version}`, '--json', '--ignore-scripts', '--pack-destination', dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(output) as { filename: string; integrity: string; version: string }[];
  if (!packed) throw new Error(`npm pack redoc@${version} reported no tarball`);
  const tarball = path.join(dir, packed.filename);
  const integrity = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
  if (integrity !== packed.integrity)
    throw new Error(`the tarball of redoc@${packed.version} does not match the integrity npm reports (${packed.integrity})`);
  return tarball;
}

function main(argv: string[]): number {
  if (argv.length > 1 || argv.some((arg) => arg.startsWith('-'))) {
    process.stderr.write('usage: npm run redoc:vendor -- [<redoc version>]\n');
    return 2;
  }
  const current = path.join(REDOC_DIR, 'manifest.json');
  const version = argv[0] ?? (JSON.parse(fs.readFileSync(current, 'utf8')) as Manifest).version;
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-redoc-pack-'));
  try {
    const manifest = vendorFromTarball(packRedoc(version, downloads));
    for (const [name, file] of Object.entries(manifest.files)) process.stdout.write(`${file.sha256}  ${name}\n`);
    process.stdout.write(
      `wrote ${path.relative(PROJECT_ROOT, REDOC_DIR)}/ from redoc ${manifest.version}; update the version named in its README.md and docs/api.md, then run the API reference tests\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  } finally {
    fs.rmSync(downloads, { recursive: true, force: true });
  }
}

// Run as a command, not when a test imports it.
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) process.exitCode = main(process.argv.slice(2));
