import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/lib/ → ../..). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The production start command (docs/operations.md): `UV_THREADPOOL_SIZE=2 node --max-semi-space-size=32 dist/main.js`. */
export const PRODUCTION_ENTRY = 'dist/main.js';
export const PRODUCTION_NODE_ARGS: readonly string[] = ['--max-semi-space-size=32'];
export const PRODUCTION_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE ?? '2';

/** `npm run build`: compiles src/ into dist/, as a deployment would before starting. */
export function buildServer(): void {
  const build = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
}

/**
 * Another revision of the server, built beside this checkout for a same-run comparison
 * (BENCH_AB, docs/benchmarks.md "Same-run comparison of revisions"): its tree from
 * `git archive` into node_modules/.cache/almoner-bench/ab/<commit>, this checkout's
 * node_modules linked in, compiled as `npm run build` compiles; kept for the next run. Its
 * migrations must be this checkout's (both servers share the bench database).
 */
export function buildRevision(revision: string): { commit: string; entry: string } {
  const git = (args: string[], input?: Buffer) => {
    const run = spawnSync('git', args, { cwd: ROOT, input, maxBuffer: 1 << 30 });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.stderr.toString('utf8')}`);
    return run.stdout;
  };
  const commit = git(['rev-parse', '--verify', `${revision}^{commit}`])
    .toString('utf8')
    .trim();
  const dir = path.join(ROOT, 'node_modules', '.cache', 'almoner-bench', 'ab', commit);
  const entry = path.join(dir, PRODUCTION_ENTRY);
  if (fs.existsSync(entry)) return { commit, entry };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: git(['archive', commit]), maxBuffer: 1 << 30 });
  if (untar.status !== 0) throw new Error(`unpacking ${commit} failed: ${untar.stderr.toString('utf8')}`);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const build = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (build.status !== 0) {
    fs.rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
    throw new Error(`building ${commit} failed:\n${build.stdout}${build.stderr}`);
  }
  return { commit, entry };
}

/** The four public URLs with port 0: the server binds an ephemeral port for each (docs/configuration.md, Port 0). */
export const EPHEMERAL_URLS = {
  ALMONER_BASE_URL: 'http://127.0.0.1:0',
  ALMONER_SANDBOX_BASE_URL: 'http://127.0.0.1:0',
  ALMONER_DASHBOARD_URL: 'http://127.0.0.1:0',
  ALMONER_SANDBOX_DASHBOARD_URL: 'http://127.0.0.1:0',
} as const;

export interface AlmonerUrls {
  api: string;
  sandboxApi: string;
  dashboard: string;
  sandboxDashboard: string;
}

/** One GET without keep-alive; resolves with the status (0 when nothing answered). */
export function probe(url: string, timeoutMs = 2_000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/** process.env without DATABASE_URL or ALMONER_* (so the caller's settings never leak in), plus `extra`. */
export function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name === 'DATABASE_URL' || name.startsWith('ALMONER_')) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** The node the child processes (servers under test, baselines) run on: bench/lib/node-runtime.ts. */
let childNode = process.execPath;

export function useNodeForChildren(execPath: string): void {
  childNode = execPath;
}

/** A child Node process (on the node useNodeForChildren chose), with its output kept for errors. */
export class NodeProcess {
  readonly child: ChildProcess;
  output = '';
  /** Lines that start with `{`, kept apart from the output's tail so a chatty child (a GC trace) cannot push them out. */
  private readonly jsonLines: string[] = [];
  private partial = '';
  exit: { code: number | null; signal: string | null } | undefined;
  readonly exited: Promise<void>;

  /** A `.ts` entry runs through tsx; a `.js` entry (the build in dist/) runs as it is; `args` follow the entry. */
  constructor(entry: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = [], args: string[] = []) {
    const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
    this.child = spawn(childNode, [...nodeArgs, ...loader, entry, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    // BENCH_CHILD_LOG=<dir>: each child's whole output also goes to <dir>/<entry>-<pid>.log (a
    // GC trace, say), since only the tail is kept in memory.
    const logDir = process.env.BENCH_CHILD_LOG;
    const logFile = logDir
      ? path.join(path.resolve(logDir), `${path.basename(entry).replace(/\.[cm]?[jt]s$/, '')}-${this.child.pid}.log`)
      : undefined;
    if (logDir) fs.mkdirSync(path.resolve(logDir), { recursive: true });
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.output = (this.output + text).slice(-20_000);
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop()!.slice(-100_000);
      for (const line of lines) if (line.startsWith('{') && this.jsonLines.length < 1_000) this.jsonLines.push(line);
      if (logFile) fs.appendFileSync(logFile, chunk);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Polls `url` every `intervalMs` until it answers 200; returns the milliseconds since `since`. */
  async waitFor(url: string, since: number, timeoutMs = 60_000, intervalMs = 25): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`process exited (${JSON.stringify(this.exit)}) before ${url} answered\n${this.output}`);
      if ((await probe(url, 1_000)) === 200) return performance.now() - since;
      if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms\n${this.output}`);
      await sleep(intervalMs);
    }
  }

  /** Waits for Almoner's ready file (ALMONER_READY_FILE: written once it listens) and returns the URLs it serves. */
  async waitForReadyFile(file: string, timeoutMs = 60_000, intervalMs = 25): Promise<AlmonerUrls> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (fs.existsSync(file)) {
        const { urls } = JSON.parse(fs.readFileSync(file, 'utf8')) as { urls: Record<string, string> };
        return {
          api: urls.base_url!,
          sandboxApi: urls.sandbox_base_url!,
          dashboard: urls.dashboard_url!,
          sandboxDashboard: urls.sandbox_dashboard_url!,
        };
      }
      if (!this.running) throw new Error(`process exited (${JSON.stringify(this.exit)}) before it wrote ${file}\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`no ready file ${file} within ${timeoutMs} ms\n${this.output}`);
      await sleep(intervalMs);
    }
  }

  /** Waits for a line on stdout that parses as JSON and has `key`. */
  async waitForJsonLine<T>(key: string, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.jsonLines) {
        try {
          const value = JSON.parse(line) as Record<string, unknown>;
          if (key in value) return value as T;
        } catch {
          // a line that only starts like JSON
        }
      }
      if (!this.running) throw new Error(`process exited (${JSON.stringify(this.exit)}) before it printed ${key}\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`no ${key} line within ${timeoutMs} ms\n${this.output}`);
      await sleep(50);
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** The resident set size of a process in bytes (VmRSS), or undefined once it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system, all threads) a process has used so far, in seconds. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return undefined;
  }
}

/** The kinds of a Node server's threads, by their names in /proc (docs/benchmarks.md, "CPU per thread"). */
export type ThreadClass = 'main' | 'threadpool' | 'v8_background' | 'other';

function threadClass(pid: number, tid: number, name: string): ThreadClass {
  if (tid === pid) return 'main';
  if (name.startsWith('libuv-worker')) return 'threadpool';
  // V8's platform workers: background compilation and the garbage collector's helpers.
  if (name.startsWith('V8Worker') || name.startsWith('V8 DefaultWorke')) return 'v8_background';
  // Node 20 names every thread "node": there, only the main thread is told apart.
  return 'other';
}

/** CPU time (user + system) a process's threads have used so far, in seconds, summed by kind of thread. */
export function cpuSecondsByThread(pid: number): Record<ThreadClass, number> {
  const sums: Record<ThreadClass, number> = { main: 0, threadpool: 0, v8_background: 0, other: 0 };
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return sums;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sums[threadClass(pid, Number(tid), name)] += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // A thread that ended between the listing and the read: its time is lost to the sum.
    }
  }
  return sums;
}

/** The children of a process (every thread's), from /proc/<pid>/task/<tid>/children; none once it is gone. */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const task of tasks) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
        if (child.trim()) children.push(Number(child));
    } catch {
      // the thread ended meanwhile
    }
  }
  return children;
}

/** A process and all its descendants (a cluster primary and its workers), the process first. */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) for (const child of childPids(tree[i]!)) if (!tree.includes(child)) tree.push(child);
  return tree;
}

/**
 * Samples a process's RSS every `intervalMs` (200 ms unless told) until stopped; reports the peak in MB. With `tree`, each
 * sample is the sum over the process and its descendants at that moment (a cluster primary
 * and its workers), and the peak is the largest sum.
 */
export class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    private readonly tree = false,
    intervalMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    let rss: number | undefined;
    for (const p of this.tree ? processTree(this.pid) : [this.pid]) {
      const one = rssBytes(p);
      if (one !== undefined) rss = (rss ?? 0) + one;
    }
    if (rss !== undefined && rss > this.peak) this.peak = rss;
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return Math.round((this.peak / 1024 / 1024) * 10) / 10;
  }
}
