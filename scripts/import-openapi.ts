/**
 * Re-imports the published OpenAPI documents from a checkout of chariot-openapi:
 *
 *   npm run openapi:import -- <checkout> [--commit <sha>]
 *
 * Copies specs/<name>.yaml for each vendored document, and LICENSE, into spec/openapi/
 * byte for byte, and rewrites spec/openapi/manifest.json (source, commit, sha256 and git
 * blob id per file) so the copy can be checked against upstream. The commit defaults to the
 * checkout's HEAD when it is a git work tree.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config/paths.js';

export const SPEC_DIR = path.join(PROJECT_ROOT, 'spec', 'openapi');
export const SOURCE = 'https://github.com/chariot-giving/chariot-openapi';
/** Vendored file → its path in the upstream repository. */
export const FILES: Record<string, string> = {
  '2026-04-01.yaml': 'specs/2026-04-01.yaml',
  '2026-01-15.yaml': 'specs/2026-01-15.yaml',
  '2023-01-01.yaml': 'specs/2023-01-01.yaml',
  'fdx-v6.yaml': 'specs/fdx-v6.yaml',
  LICENSE: 'LICENSE',
};

export interface Manifest {
  source: string;
  commit: string;
  files: Record<string, { upstream: string; sha256: string; git_blob: string }>;
}

export function describeFile(bytes: Buffer) {
  return {
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    // The id `git ls-tree` shows upstream, so the copy can be compared without a checkout.
    git_blob: crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex'),
  };
}

function headCommit(checkout: string): string {
  try {
    return execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** Copies the files from `checkout` into `outDir` and writes its manifest.json. */
export function importOpenApi(checkout: string, commit: string, outDir = SPEC_DIR): Manifest {
  const missing = Object.values(FILES).filter((file) => !fs.existsSync(path.join(checkout, file)));
  if (missing.length > 0) throw new Error(`${checkout} is not a checkout of chariot-openapi: missing ${missing.join(', ')}`);
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`cannot tell the upstream commit of ${checkout}: pass --commit <40-hex sha>`);
  const manifest: Manifest = { source: SOURCE, commit, files: {} };
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, upstream] of Object.entries(FILES)) {
    const bytes = fs.readFileSync(path.join(checkout, upstream));
    fs.writeFileSync(path.join(outDir, name), bytes);
    manifest.files[name] = { upstream, ...describeFile(bytes) };
  }
  fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

function main(argv: string[]): number {
  const commitAt = argv.indexOf('--commit');
  const positional = argv.filter((arg, i) => !arg.startsWith('--') && (commitAt < 0 || i !== commitAt + 1));
  if (positional.length !== 1 || (commitAt >= 0 && !argv[commitAt + 1])) {
    process.stderr.write('usage: npm run openapi:import -- <checkout of chariot-openapi> [--commit <sha>]\n');
    return 2;
  }
  const checkout = path.resolve(positional[0]!);
  try {
    const manifest = importOpenApi(checkout, commitAt >= 0 ? argv[commitAt + 1]! : headCommit(checkout));
    for (const [name, file] of Object.entries(manifest.files)) process.stdout.write(`${file.sha256}  ${name}\n`);
    process.stdout.write(
      `wrote ${path.relative(PROJECT_ROOT, SPEC_DIR)}/manifest.json (commit ${manifest.commit}); update the commit named in its README.md\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
}

// Run as a command, not when a test imports it.
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) process.exitCode = main(process.argv.slice(2));
