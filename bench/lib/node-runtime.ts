import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes.js';

/**
 * Which Node runs the servers under test (docs/benchmarks.md, "Node 24 and Node 20"): Node 24 by
 * default, installed on first use as CI does (`npm install --prefix <dir> node@24`, the package's
 * bin/node) into node_modules/.cache/almoner-bench/node24 (or BENCH_NODE_CACHE) and reused
 * afterwards; `BENCH_NODE=20` or `--node=20` (any major the machine's node has, or `machine`)
 * keeps the machine's node. The load generator is always the machine's node.
 */

export interface ServerNode {
  /** The binary the server and the baselines are spawned with. */
  execPath: string;
  /** The major asked for (BENCH_NODE or --node). */
  requested: string;
  /** Where it came from: the machine's node, or the npm package installed in the cache (`npm package node@24`). */
  source: string;
}

/** The requested Node: --node=<major> on the command line, else BENCH_NODE, else 24. */
function requested(): string {
  const flag = process.argv.find((a) => a.startsWith('--node='));
  return (flag?.slice('--node='.length) ?? process.env.BENCH_NODE ?? '24').trim().replace(/^v/, '');
}

function versionOf(execPath: string): string {
  const run = spawnSync(execPath, ['--version'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${execPath} --version failed: ${run.stderr}`);
  return run.stdout.trim();
}

/** The node binary npm's `node@<major>` package brings, installed into `dir` when it is not there yet. */
function installed(major: string, log: (line: string) => void): string {
  const dir = path.resolve(process.env.BENCH_NODE_CACHE ?? path.join(ROOT, 'node_modules', '.cache', 'almoner-bench'), `node${major}`);
  const candidates = [path.join(dir, 'node_modules', 'node', 'bin', 'node'), path.join(dir, 'node_modules', '.bin', 'node')];
  const found = () => candidates.find((c) => fs.existsSync(c) && versionOf(c).startsWith(`v${major}.`));
  let binary = found();
  if (binary) return binary;
  log(`installing Node ${major} for the server (npm install --prefix ${path.relative(ROOT, dir) || dir} node@${major}; reused afterwards)`);
  fs.mkdirSync(dir, { recursive: true });
  // Its own package.json, so npm installs into `dir` and never reads or writes the repository's.
  if (!fs.existsSync(path.join(dir, 'package.json')))
    fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: `almoner-bench-node${major}`, private: true })}\n`);
  const npm = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, `node@${major}`], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 600_000,
  });
  binary = found();
  if (npm.status !== 0 || !binary)
    throw new Error(`could not install node@${major} into ${dir} (npm exit ${npm.status}):\n${npm.stdout}${npm.stderr}`);
  return binary;
}

/** Resolves (and, the first time, installs) the Node the servers run on. */
export function serverNode(log: (line: string) => void): ServerNode {
  const major = requested();
  if (major === 'machine' || major === process.versions.node.split('.')[0])
    return { execPath: process.execPath, requested: major, source: 'machine' };
  if (!/^\d+$/.test(major))
    throw new Error(`BENCH_NODE / --node must be a major version (24, 20) or "machine", not ${JSON.stringify(major)}`);
  return { execPath: installed(major, log), requested: major, source: `npm package node@${major}` };
}

/**
 * Loaded into each server under test (--import): prints the runtime the child actually runs,
 * which the harness records (results JSON, the table's run line).
 */
export const RUNTIME_PROBE = path.join(ROOT, 'bench', 'lib', 'runtime-probe.mjs');
