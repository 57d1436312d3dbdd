import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { embeddedPgdata } from '../../src/embedded-postgres/location.js';
import { registerDataDir } from './leftover-postgres.js';
import { removeRelocatedPgdata } from './relocated-pgdata.js';

/**
 * End-to-end helpers: the real server (`src/main.ts`) and the real admin CLI
 * (`src/cli/main.ts`) as child processes, the server on ports it binds itself (port 0),
 * with an environment that holds nothing of the caller's Almoner settings.
 */

export { PROJECT_ROOT };

const SERVER_ENTRY = 'src/main.ts';
const CLI_ENTRY = 'src/cli/main.ts';

/**
 * Node flags that run the entry as on a production install (`npm ci --omit=dev`, the Docker
 * image): what only the dev dependencies bring cannot be found (production-install/hooks.mjs).
 */
function nodeFlags(productionInstall: boolean | undefined): string[] {
  const register = pathToFileURL(path.join(PROJECT_ROOT, 'test', 'helpers', 'production-install', 'register.mjs')).href;
  return ['--import', 'tsx', ...(productionInstall ? ['--import', register] : [])];
}

// ---------------------------------------------------------------- URLs

export interface PublicUrls {
  api: string;
  sandboxApi: string;
  dashboard: string;
  sandboxDashboard: string;
}

export function allUrls(urls: PublicUrls): string[] {
  return [urls.api, urls.sandboxApi, urls.dashboard, urls.sandboxDashboard];
}

/**
 * The four public URLs with port 0: the server binds an ephemeral port for each and names
 * them in its ready file, so no other test can take a port between choosing and binding it.
 */
export function ephemeralUrlEnv(scheme: 'http' | 'https' = 'http'): Record<string, string> {
  const url = `${scheme}://127.0.0.1:0`;
  return { ALMONER_BASE_URL: url, ALMONER_SANDBOX_BASE_URL: url, ALMONER_DASHBOARD_URL: url, ALMONER_SANDBOX_DASHBOARD_URL: url };
}

/** The same URLs reached with another scheme (e.g. plain HTTP to a server configured for a TLS proxy). */
export function withScheme(urls: PublicUrls, scheme: 'http' | 'https'): PublicUrls {
  const swap = (url: string) => url.replace(/^https?:/, `${scheme}:`);
  return {
    api: swap(urls.api),
    sandboxApi: swap(urls.sandboxApi),
    dashboard: swap(urls.dashboard),
    sandboxDashboard: swap(urls.sandboxDashboard),
  };
}

// ---------------------------------------------------------------- environment

/** process.env without DATABASE_URL or any ALMONER_* variable, plus `extra` (undefined deletes). */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name === 'DATABASE_URL' || name.startsWith('ALMONER_')) delete env[name];
  }
  env.ALMONER_LOG_LEVEL = 'warn';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  // The clients file lives with the data it belongs to, never in the repository's config/.
  if (env.ALMONER_DATA_DIR && !env.ALMONER_CLIENTS_FILE) env.ALMONER_CLIENTS_FILE = `${env.ALMONER_DATA_DIR}/clients.json`;
  return env;
}

// ---------------------------------------------------------------- data directories and the embedded PostgreSQL

/** A fresh data directory the `postgres` OS user can traverse (the tests run as root). */
export function makeDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-e2e-'));
  fs.chmodSync(dir, 0o755);
  registerDataDir(dir);
  return dir;
}

/** The postmaster's pid from PGDATA's postmaster.pid (<dataDir>/pg, or where it was relocated), if that file exists. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(embeddedPgdata(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process (a zombie nobody reaped does not count). */
export function isAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    if (fs.existsSync('/proc/self/stat')) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a live postmaster holding the data directory, if any. */
export function livePostmaster(dataDir: string): number | undefined {
  const pid = postmasterPid(dataDir);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

export async function waitUntil(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until no live postmaster holds the data directory. */
export async function waitForPostgresStopped(dataDir: string, timeoutMs = 15_000): Promise<void> {
  await waitUntil(`the embedded PostgreSQL in ${dataDir} to stop`, () => livePostmaster(dataDir) === undefined, timeoutMs);
}

async function pgCtlPath(): Promise<string> {
  const module = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { pg_ctl: string };
  return module.pg_ctl;
}

/** Stops a postmaster left holding the data directory (e.g. after a test SIGKILLed the server). */
export async function stopOrphanPostgres(dataDir: string): Promise<void> {
  if (livePostmaster(dataDir) === undefined) return;
  const pgCtl = await pgCtlPath();
  const args = ['stop', '-D', embeddedPgdata(dataDir), '-m', 'immediate', '-w', '-t', '30'];
  const asRoot = process.getuid?.() === 0;
  spawnSync(asRoot ? 'runuser' : pgCtl, asRoot ? ['-u', 'postgres', '--', pgCtl, ...args] : args, { stdio: 'ignore', timeout: 40_000 });
  const pid = livePostmaster(dataDir);
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Stops whatever PostgreSQL is left in the data directory, then removes the directory (and its relocated PGDATA, if any). */
export async function removeDataDir(dataDir: string | undefined): Promise<void> {
  if (!dataDir) return;
  await stopOrphanPostgres(dataDir);
  removeRelocatedPgdata(dataDir);
  fs.rmSync(dataDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- HTTP

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  /** Host header; by default the URL's authority, which is what the server expects. */
  host?: string;
  /** Further request headers. */
  headers?: Record<string, string>;
  method?: string;
  timeoutMs?: number;
}

/** One request, no keep-alive, self-signed certificates accepted. */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      target,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: { ...options.headers, host: options.host ?? target.host, connection: 'close' },
        timeout: options.timeoutMs ?? 5_000,
        ...(target.protocol === 'https:' ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json<T>() {
              return JSON.parse(body) as T;
            },
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

// ---------------------------------------------------------------- the server

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the server wrote to its ready file once every listener was bound (src/server/ready-file.ts). */
export interface ReadyInfo {
  pid: number;
  /** The four public URLs as served: each port-0 URL with the port bound for it. */
  urls: PublicUrls;
  listening: { host: string; port: number }[];
}

function readReadyFile(file: string): ReadyInfo | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined; // not written yet
  }
  const record = JSON.parse(text) as { pid: number; urls: Record<string, string>; listening: ReadyInfo['listening'] };
  const { base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url } = record.urls;
  return {
    pid: record.pid,
    urls: { api: base_url!, sandboxApi: sandbox_base_url!, dashboard: dashboard_url!, sandboxDashboard: sandbox_dashboard_url! },
    listening: record.listening,
  };
}

export class ServerProcess {
  stdout = '';
  stderr = '';
  exitStatus: ExitStatus | undefined;
  readonly exited: Promise<ExitStatus>;
  private ready: ReadyInfo | undefined;

  constructor(
    readonly child: ChildProcess,
    /** ALMONER_READY_FILE of this process, in a directory of its own that goes when it exits. */
    readonly readyFile: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (this.stdout += text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        fs.rmSync(path.dirname(readyFile), { recursive: true, force: true });
        resolve(this.exitStatus);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** The public URLs it serves, from its ready file: known once waitReady() has returned. */
  get urls(): PublicUrls {
    if (!this.ready) throw new Error('the server has not announced its URLs yet: await waitReady() first');
    return this.ready.urls;
  }

  /** The addresses it listens on (with ALMONER_LISTEN, not those of the URLs). */
  get listening(): ReadyInfo['listening'] {
    if (!this.ready) throw new Error('the server has not announced its addresses yet: await waitReady() first');
    return this.ready.listening;
  }

  /** What the process printed, for assertion messages. */
  output(): string {
    return `--- server stdout ---\n${this.stdout.slice(-4000)}\n--- server stderr ---\n${this.stderr.slice(-4000)}`;
  }

  /**
   * Waits for the ready file (the server writes it once every listener is bound), then polls
   * GET /readyz until 200 at `probe(ready)`, by default its API URL. Fails early if the process exits.
   * The time limit guards against a server that never gets ready, it is not a speed check: a
   * start compiles the TypeScript (tsx) and migrates, which takes a minute on a loaded 2-core host.
   */
  async waitReady(timeoutMs = 90_000, probe: (ready: ReadyInfo) => string = (ready) => ready.urls.api): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no ready file yet';
    for (;;) {
      if (!this.running) throw new Error(`server exited (${JSON.stringify(this.exitStatus)}) before it was ready\n${this.output()}`);
      this.ready ??= readReadyFile(this.readyFile);
      if (this.ready) {
        const url = probe(this.ready);
        try {
          const res = await request(`${url}/readyz`, { timeoutMs: 3_000 });
          if (res.status === 200) return;
          last = `${url}/readyz: status ${res.status}: ${res.body}`;
        } catch (error) {
          last = `${url}/readyz: ${(error as Error).message}`;
        }
      }
      if (Date.now() > deadline) throw new Error(`server not ready after ${timeoutMs} ms (last: ${last})\n${this.output()}`);
      await sleep(this.ready ? 200 : 50);
    }
  }

  /** Sends `signal` and waits for the exit; throws if it takes longer than `timeoutMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<ExitStatus> {
    if (!this.running) return this.exitStatus!;
    this.child.kill(signal);
    return this.waitExit(timeoutMs, `of ${signal}`);
  }

  /** Waits for the process to exit by itself; throws if it is still running after `timeoutMs`. */
  async waitExit(timeoutMs = 15_000, after = 'of starting'): Promise<ExitStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`server still running ${timeoutMs} ms ${after}\n${this.output()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** For cleanup: SIGTERM, then SIGKILL if it lingers. Never throws. */
  async kill(): Promise<void> {
    if (!this.running) return;
    try {
      await this.stop('SIGTERM', 15_000);
    } catch {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

export interface SpawnOptions {
  /**
   * Variables on top of childEnv() (undefined deletes). The four public URLs default to port 0
   * (ephemeralUrlEnv()); read them from the process once it is ready.
   */
  env: Record<string, string | undefined>;
  /** As on a production install: the packages only the dev dependencies bring are missing. */
  productionInstall?: boolean;
}

/** Starts `node --import tsx src/main.ts` in the project root. */
export function spawnServer(options: SpawnOptions): ServerProcess {
  const readyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-ready-')), 'ready.json');
  const child = spawn(process.execPath, [...nodeFlags(options.productionInstall), SERVER_ENTRY], {
    cwd: PROJECT_ROOT,
    env: childEnv({ ...ephemeralUrlEnv(), ALMONER_READY_FILE: readyFile, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ServerProcess(child, readyFile);
}

/** Starts the server and waits until it is ready (see ServerProcess.waitReady). */
export async function startServer(options: SpawnOptions & { readyTimeoutMs?: number }): Promise<ServerProcess> {
  const server = spawnServer(options);
  try {
    await server.waitReady(options.readyTimeoutMs);
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

// ---------------------------------------------------------------- the admin CLI

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env: Record<string, string | undefined>;
  /** Written to the CLI's standard input, which is then closed. */
  stdin?: string;
  timeoutMs?: number;
  /** As on a production install: the packages only the dev dependencies bring are missing. */
  productionInstall?: boolean;
}

/** Runs `node --import tsx src/cli/main.ts <args>` to completion. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags(options.productionInstall), CLI_ENTRY, ...args], {
      cwd: PROJECT_ROOT,
      env: childEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdin.on('error', () => undefined); // EPIPE if it exits before reading
    child.stdin.end(options.stdin ?? '');
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`admin CLI ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function describeCli(args: readonly string[], result: CliResult): string {
  return `admin ${args.join(' ')} → exit ${result.code}${result.signal ? ` (${result.signal})` : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/**
 * Runs an admin command with --json and checks the contract: exit 0 and exactly one JSON
 * object on stdout (one line). Returns that object.
 */
export async function runCliJson(args: readonly string[], options: CliOptions): Promise<Record<string, unknown>> {
  const fullArgs = args.includes('--json') ? args : [...args, '--json'];
  const result = await runCli(fullArgs, options);
  const context = describeCli(fullArgs, result);
  expect(result.code, context).toBe(0);
  const lines = result.stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines, context).toHaveLength(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(lines[0]!);
  } catch {
    throw new Error(`stdout is not JSON\n${context}`);
  }
  expect(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), context).toBe(true);
  return parsed as Record<string, unknown>;
}

/** Checks the failure contract: non-zero exit, exactly one line on stderr, no stack trace. */
export function expectOneLineFailure(args: readonly string[], result: CliResult, contains: string): void {
  const context = describeCli(args, result);
  expect(result.code, context).not.toBe(0);
  expect(result.code, context).not.toBeNull();
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, context).toHaveLength(1);
  expect(lines[0], context).toContain(contains);
  expect(result.stderr, context).not.toContain('    at ');
}

// ---------------------------------------------------------------- scenarios shared by several files

export const E2E_ORG = { ein: '55-1234567', name: 'E2E Org' } as const;
export const E2E_USER = { email: 'e2e@example.org', password: 'e2e-password-123' } as const;

/** Every endpoint answers /healthz and /readyz with 200 on all four URLs. */
export async function expectHealthyEverywhere(server: ServerProcess): Promise<void> {
  for (const url of allUrls(server.urls)) {
    for (const probe of ['/healthz', '/readyz']) {
      const res = await request(`${url}${probe}`);
      expect(res.status, `GET ${url}${probe}: ${res.body}\n${server.output()}`).toBe(200);
    }
  }
}

/**
 * Admin commands of docs/operations.md, "Admin CLI", run as child processes (meant to be
 * run while a server uses the same database): migrate, orgs add, users add, members add,
 * set-role and remove, and a duplicate users add that must fail on one line.
 */
export async function exerciseAdminCommands(env: Record<string, string | undefined>): Promise<{ orgId: string; userId: string }> {
  const migrated = await runCliJson(['migrate'], { env });
  expect(migrated).toEqual({ applied: [] });

  const org = await runCliJson(['orgs', 'add', '--ein', E2E_ORG.ein, '--name', E2E_ORG.name], { env });
  expect(org).toMatchObject({ ein: '55-1234567', name: 'E2E Org', kind: 'nonprofit' });
  expect(typeof org.id === 'string' && org.id.length > 0, JSON.stringify(org)).toBe(true);

  const user = await runCliJson(['users', 'add', '--email', E2E_USER.email, '--password-stdin'], { env, stdin: `${E2E_USER.password}\n` });
  expect(user).toMatchObject({ email: E2E_USER.email });
  expect(typeof user.id === 'string' && user.id.length > 0, JSON.stringify(user)).toBe(true);
  expect(JSON.stringify(user)).not.toContain(E2E_USER.password);

  const added = await runCliJson(['members', 'add', '--org', E2E_ORG.ein, '--email', E2E_USER.email, '--role', 'admin'], { env });
  expect(added).toMatchObject({ org: '55-1234567', email: E2E_USER.email, role: 'admin' });

  const changed = await runCliJson(['members', 'set-role', '--org', E2E_ORG.ein, '--email', E2E_USER.email, '--role', 'read_only'], {
    env,
  });
  expect(changed).toMatchObject({ org: '55-1234567', email: E2E_USER.email, role: 'read_only' });

  const removed = await runCliJson(['members', 'remove', '--org', E2E_ORG.ein, '--email', E2E_USER.email], { env });
  expect(removed).toMatchObject({ org: '55-1234567', email: E2E_USER.email });

  const duplicateArgs = ['users', 'add', '--email', E2E_USER.email, '--password-stdin', '--json'];
  const duplicate = await runCli(duplicateArgs, { env, stdin: `${E2E_USER.password}\n` });
  expectOneLineFailure(duplicateArgs, duplicate, 'already exists');
  expect(duplicate.stdout.trim(), describeCli(duplicateArgs, duplicate)).toBe('');

  return { orgId: org.id as string, userId: user.id as string };
}
