/**
 * `npm run bench`: Almoner under load against its baselines, measured in the same run.
 *
 * This process is the load generator (autocannon, and a form-submitting user agent for the
 * full flow); the server under test, the bare oidc-provider (on its in-memory adapter, and
 * as the durable peer on a one-table Postgres adapter), the Koa + pg endpoint and the argon2
 * rate are each a child process of their own, so nothing measured shares an event loop with
 * the load. The server runs against the machine's PostgreSQL (BENCH_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres) in a fresh database, and the durable peer in
 * another of its own; both are dropped at the end.
 *
 * Writes bench/results/<date>.json and the table in docs/benchmarks.md, and prints the table.
 *
 * The server under test is the production build (`npm run build`, then
 * `UV_THREADPOOL_SIZE=2 node --max-semi-space-size=32 dist/main.js`, as docs/operations.md runs it in
 * production); BENCH_SERVER=tsx runs `node --max-semi-space-size=32 --import tsx src/main.ts`
 * (what `npm start` runs) instead.
 *
 * The servers (Almoner and the baselines) run on Node 24 unless BENCH_NODE=20 (or --node=20)
 * keeps the machine's node (bench/lib/node-runtime.ts); the load generator is always this process.
 *
 * Knobs (environment): BENCH_SECONDS (per measured run, default 12), BENCH_ONLY (comma list
 * of scenario ids: refresh, id_token, dpop_refresh, code, donations, fdx, dpop_fdx, dpop_check, flow,
 * client_auth, directory_import, directory_search, disbursements, disbursement_contention,
 * grant_capture, gift_lists, gift_ingest, gift_upload, donor_flow, workers, start; a run with BENCH_ONLY writes its JSON but leaves the table in
 * docs/benchmarks.md to a run of every scenario), BENCH_NODE (a major version, or machine),
 * BENCH_NODE_CACHE (where a Node is installed), BENCH_DIRECTORY_ROWS (default 1,000,000), BENCH_SERVER (dist or tsx), BENCH_CPU_PROF (a
 * directory: the server under load runs with --cpu-prof there), BENCH_NODE_ARGS (more node
 * options for the server under load), BENCH_AB (git revisions, comma-separated: the refresh_token
 * scenario is measured against each too, in turn, BENCH_AB_ROUNDS runs each, default 2; BENCH_AB_NODE_ARGS:
 * node options for those servers only), BENCH_BASELINE_NODE_ARGS (node options for the bare provider
 * baselines), BENCH_CHILD_LOG (a directory: every child's whole output is written there, one file
 * each), BENCH_MEMORY_LOG (a directory: the server under test logs its memory's parts there every
 * second), BENCH_NO_WRITE=1 (print only), BENCH_DEBUG=1 (print the server's output at the end).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { authorize, tokenRequest } from '../test/helpers/flow.js';
import type { OAuthTestServer } from '../test/helpers/oauth-server.js';
import { ClientSecretCache } from '../src/oidc/client-secret-cache.js';
import { generateClientSecret, hashClientSecret } from '../src/oidc/clients/service.js';
import { AlmonerSetup, BANK_SCOPE, ENVIRONMENT, REDIRECT_URI, SCOPE, type Client } from './lib/almoner.js';
import { ASSERTION_TYPE, clientAssertion, dpopProof, makeMany, measureProofCheck, type ProofCheckMeasurement } from './lib/dpop.js';
import { sql } from 'kysely';
import { writeDemoBmfFile } from '../src/demo/bmf-file.js';
import { importBmfFile } from '../src/directory/import-service.js';
import { directorySizes, einQueries, mb, resultCounts, searchRequests, TYPEAHEAD_QUERIES, type DirectorySizes } from './lib/directory.js';
import {
  addGrantmaker,
  contentionMeasurement,
  contentionRound,
  createAndApprove,
  DISBURSEMENT_CENTS,
  fund,
  ledgerClean,
  type ContentionRound,
  type Grantmaker,
} from './lib/grantmaking.js';
import {
  benchProvider,
  buildScanBatch,
  giftListRequests,
  giftPageTokens,
  ingestInChild,
  sameJson,
  seedGiftRecords,
  uploadBatch,
} from './lib/gift.js';
import { addPlatform, authorizedSessions, benchConnects, captureNext, donorWalks, GRANT_CENTS } from './lib/giving.js';
import { RUNTIME_PROBE, serverNode } from './lib/node-runtime.js';
import { round, runLoad, runPaced, runWorkers, warmedWorkers, type HttpRequestSpec, type Measurement } from './lib/load.js';
import {
  buildRevision,
  buildServer,
  cleanEnv,
  EPHEMERAL_URLS,
  NodeProcess,
  PRODUCTION_ENTRY,
  type AlmonerUrls,
  PRODUCTION_NODE_ARGS,
  PRODUCTION_THREADPOOL_SIZE,
  processTree,
  ROOT,
  RssSampler,
  rssBytes,
  sleep,
  useNodeForChildren,
} from './lib/processes.js';
import {
  markdownTable,
  median,
  resultsFileName,
  writeDoc,
  type BenchResults,
  type Check,
  type ScenarioResult,
  type StartResult,
} from './lib/report.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const WARM_SECONDS = 3;
/**
 * Requests every server gets before it is measured, at least: a fixed 3 s left Almoner, with far
 * more code on the path than the baselines, still compiling (TurboFan in the background) while
 * it was measured. The same rule for every server (docs/benchmarks.md, "Steady state").
 */
const WARM_REQUESTS = Number(process.env.BENCH_WARM_REQUESTS ?? 5000);
/** Node options for the compared revisions' servers only (BENCH_AB_NODE_ARGS): the same code under other V8 settings. */
const AB_NODE_ARGS = (process.env.BENCH_AB_NODE_ARGS ?? '').split(' ').filter(Boolean);
/**
 * Revisions to compare this checkout with in the same run (BENCH_AB, git revisions separated
 * by commas; BENCH_AB_ROUNDS measured runs of each, alternating): the refresh_token scenario
 * is measured against every one, in turn, so a change's before/after is not two runs' noise
 * (docs/benchmarks.md, "Same-run comparison of revisions"). An entry may carry node options of
 * its own after the revision (`HEAD --max-semi-space-size=64`), after BENCH_AB_NODE_ARGS.
 */
const AB_REVISIONS = (process.env.BENCH_AB ?? '')
  .split(',')
  .map((entry) => entry.trim().split(/\s+/).filter(Boolean))
  .filter((words) => words.length > 0)
  .map(([revision, ...args]) => ({ revision: revision!, nodeArgs: [...AB_NODE_ARGS, ...args] }));
const AB_ROUNDS = Math.max(1, Number(process.env.BENCH_AB_ROUNDS ?? 2));
const ONLY = new Set(
  (
    process.env.BENCH_ONLY ??
    'refresh,id_token,dpop_refresh,code,donations,fdx,dpop_fdx,dpop_check,flow,client_auth,directory_import,directory_search,disbursements,disbursement_contention,grant_capture,gift_lists,gift_ingest,gift_upload,donor_flow,workers,start'
  )
    .split(',')
    .map((s) => s.trim()),
);
/** Only a run of every scenario rewrites the table in docs/benchmarks.md (a partial run writes its JSON). */
const FULL_RUN = process.env.BENCH_ONLY === undefined;
/** The scenarios that need the bank-data setup (deposit accounts, an admin, the two bank-data clients). */
const BANK_SCENARIOS = ['fdx', 'dpop_refresh', 'dpop_fdx'];
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
/** BENCH_MEMORY_LOG=<dir>: the server under test writes what its memory is made of there, every second (bench/lib/memory-log.mjs). */
const MEMORY_LOG_DIR = process.env.BENCH_MEMORY_LOG ? path.resolve(process.env.BENCH_MEMORY_LOG) : undefined;
const MEMORY_LOG = path.join(ROOT, 'bench', 'lib', 'memory-log.mjs');
/** BENCH_BASELINE_NODE_ARGS: node options for the bare provider baselines (the in-memory one and the durable peer). */
const BASELINE_NODE_ARGS = (process.env.BENCH_BASELINE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const SERVER_KIND = process.env.BENCH_SERVER === 'tsx' ? 'tsx' : 'dist';
const SERVER_ENTRY = SERVER_KIND === 'tsx' ? 'src/main.ts' : PRODUCTION_ENTRY;
const SERVER_NODE_ARGS = PRODUCTION_NODE_ARGS;
const SERVER_THREADPOOL_SIZE = PRODUCTION_THREADPOOL_SIZE;
/** How the reports name the server's command. */
const SERVER_COMMAND = `node ${SERVER_NODE_ARGS.join(' ')} ${SERVER_ENTRY}`;
const DONATIONS = 100_000;
const UNCACHED_CLIENTS = 200;
const STAFF = 8;
const TOKEN_CONNECTIONS = 16;
const GATEWAY_CONNECTIONS = 32;
const FLOW_WORKERS = 4;
/** Proofs the DPoP check is timed over (ES256), and for each of PS256 and EdDSA. */
const PROOF_CHECKS = 5000;
const PROOF_CHECKS_OTHER = 2000;
/** The directory scenarios: organizations in the demo file, its first EIN, connections of the search runs. */
const DIRECTORY_ROWS = Number(process.env.BENCH_DIRECTORY_ROWS ?? 1_000_000);
const DIRECTORY_FIRST_EIN = 100_000_000;
const DIRECTORY_CONNECTIONS = 16;
/** The disbursements scenarios: connections, the grantmaker's funding (cents), the contention rounds. */
const DISBURSEMENT_CONNECTIONS = 32;
const DISBURSEMENT_FUNDING = 1_000_000_000;
const BENCH_GRANTMAKER_EIN = '98-0000001';
const CONTENTION_TOTAL = 64;
const CONTENTION_COVERED = 10;
const CONTENTION_ROUNDS = 5;
/** The grant capture scenario: connections, the sessions authorized for each side, the platform's EIN. */
const CAPTURE_CONNECTIONS = 32;
const CAPTURE_SESSIONS = 40_000;
const BENCH_PLATFORM_EIN = '98-0000002';
/** The gift processing scenarios: list rows of each kind, the ingest batch's envelopes, the upload's size, the providers' EINs. */
const GIFT_RECORDS = 100_000;
const GIFT_ENVELOPES = 500;
const GIFT_UPLOAD_MB = 200;
const BENCH_GIFT_LIST_EIN = '98-0000004';
const BENCH_GIFT_PROVIDER_EIN = '98-0000005';
/** The donor flow scenario: donors at once, the Connects they spread over, the platform's EIN. */
const DONOR_FLOW_DONORS = 16;
const DONOR_FLOW_CONNECTS = 1_000;
const BENCH_FLOW_PLATFORM_EIN = '98-0000003';
/** Requests that make every pooled backend publish its statistics (more than the pool of 10). */
const POKES = 24;

let benchExplain: string | undefined;
let directoryFacts:
  | { rows: number; importSeconds: number; vacuumSeconds: number; generateSeconds: number; fileMb: number; sizes: DirectorySizes }
  | undefined;
/** What the server under test runs on: the node it was spawned with, and what it reported (bench/lib/runtime-probe.mjs). */
let serverRuntime: { node: string; v8: string; requested: string; source: string } | undefined;
const serverRuntimeLabel = () => (serverRuntime ? `Node ${serverRuntime.node}` : 'Node ?');
let tsxStartMs: number | undefined;
const log = (line: string) => process.stdout.write(`${line}\n`);
const wallStart = performance.now();
const loadAtStart = os.loadavg();

function basic(client: Client): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
}

const form = (values: Record<string, string>) => new URLSearchParams(values).toString();
const FORM = 'application/x-www-form-urlencoded';

function refreshRequest(client: Client, token: string): HttpRequestSpec {
  return {
    method: 'POST',
    path: '/auth/oauth/token',
    headers: { authorization: basic(client), 'content-type': FORM },
    body: form({ grant_type: 'refresh_token', refresh_token: token }),
  };
}

/** A fapi2 client's refresh: private_key_jwt (its own assertion) and a DPoP proof, each made for this one request. */
function fapiRefreshRequest(clientId: string, item: { token: string; proof: string; assertion: string }): HttpRequestSpec {
  return {
    method: 'POST',
    path: '/auth/oauth/token',
    headers: { dpop: item.proof, 'content-type': FORM },
    body: form({
      grant_type: 'refresh_token',
      refresh_token: item.token,
      client_id: clientId,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: item.assertion,
    }),
  };
}

const FDX_PATH = '/fdx/v6/accounts';

function codeRequest(client: Client, item: { code: string; verifier: string }): HttpRequestSpec {
  return {
    method: 'POST',
    path: '/auth/oauth/token',
    headers: { authorization: basic(client), 'content-type': FORM },
    // redirect_uri is sent to both servers (the bare provider requires it; Almoner accepts it).
    body: form({ grant_type: 'authorization_code', code: item.code, code_verifier: item.verifier, redirect_uri: REDIRECT_URI }),
  };
}

function introspectRequest(client: Client): HttpRequestSpec {
  return {
    method: 'POST',
    path: '/auth/oauth/introspect',
    headers: { authorization: basic(client), 'content-type': FORM },
    body: form({ token: crypto.randomBytes(32).toString('base64url') }),
  };
}

/**
 * A scenario whose every request consumes what it presents (a refresh token, a code): a short
 * calibration run, a warm-up of WARM_REQUESTS (or WARM_SECONDS, if more), then a measured run of about SECONDS with
 * exactly as many requests as were minted for it, each with its own item.
 */
async function consuming<T>(
  label: string,
  options: {
    origin: string;
    pid: number;
    tree?: boolean;
    connections?: number;
    postgresPids?: () => Promise<number[]>;
    postgresTransactions?: () => Promise<number>;
    mint: (n: number) => Promise<T[]>;
    afterMint?: () => Promise<void>;
    request: (item: T) => HttpRequestSpec;
  },
): Promise<Measurement> {
  const connections = options.connections ?? TOKEN_CONNECTIONS;
  const slack = connections * 2;
  const phase = async (amount: number, measure: boolean) => {
    const t0 = performance.now();
    const items = await options.mint(amount + slack);
    const mintSeconds = (performance.now() - t0) / 1000;
    if (measure) await options.afterMint?.();
    let next = 0;
    const result = await runLoad({
      origin: options.origin,
      connections,
      amount,
      pid: measure ? options.pid : undefined,
      tree: options.tree,
      postgresPids: options.postgresPids,
      postgresTransactions: options.postgresTransactions,
      next: () => {
        const item = items[next];
        next += 1;
        if (item === undefined) throw new Error(`${label}: ran out of minted items`);
        return options.request(item);
      },
    });
    log(
      `    ${label} ${measure ? 'measured' : 'warm-up'}: ${amount} requests in ${result.seconds} s → ${result.rps}/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.errors} errors${cpuNote(result)} (minted ${items.length} in ${mintSeconds.toFixed(1)} s)${result.firstError ? `; first error: ${result.firstError}` : ''}`,
    );
    return result;
  };
  const calibration = await phase(200, false);
  const warm = await phase(Math.max(WARM_REQUESTS, Math.round(calibration.rps * WARM_SECONDS)), false);
  // Sized from the warm-up's rate with room for a server that is still speeding up.
  return phase(Math.max(500, Math.round(Math.max(warm.rps, calibration.rps) * SECONDS * 1.5)), true);
}

/** A scenario whose requests can repeat: WARM_SECONDS and then WARM_REQUESTS of warm-up, then SECONDS measured. */
async function repeating(
  label: string,
  options: {
    origin: string;
    pid: number;
    tree?: boolean;
    postgresPids?: () => Promise<number[]>;
    postgresTransactions?: () => Promise<number>;
    connections: number;
    next: () => HttpRequestSpec;
  },
): Promise<Measurement> {
  await runLoad({ origin: options.origin, connections: options.connections, duration: WARM_SECONDS, next: options.next });
  // Then at least WARM_REQUESTS in all, as the consuming scenarios (steady state before measuring).
  await runLoad({ origin: options.origin, connections: options.connections, amount: WARM_REQUESTS, next: options.next });
  const result = await runLoad({
    origin: options.origin,
    connections: options.connections,
    duration: SECONDS,
    pid: options.pid,
    tree: options.tree,
    postgresPids: options.postgresPids,
    postgresTransactions: options.postgresTransactions,
    next: options.next,
  });
  log(
    `    ${label}: ${result.rps}/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.errors} errors, peak RSS ${result.peakRssMb} MB${cpuNote(result)}${result.firstError ? `; first error: ${result.firstError}` : ''}`,
  );
  return result;
}

async function argon2Rate(concurrency: number, seconds: number, params: { memoryKib: number; timeCost: number; parallelism: number }) {
  const child = new NodeProcess(
    'bench/baseline/argon2-rate.ts',
    cleanEnv({
      MEMORY_KIB: String(params.memoryKib),
      TIME_COST: String(params.timeCost),
      PARALLELISM: String(params.parallelism),
      CONCURRENCY: String(concurrency),
      SECONDS: String(seconds),
    }),
  );
  const line = await child.waitForJsonLine<{ argon2: { rate: number; p50: number; p99: number; completed: number; seconds: number } }>(
    'argon2',
    120_000,
  );
  await child.exited;
  return line.argon2;
}

function measured(m: Measurement): string {
  return `${m.rps}/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.errors} errors${cpuNote(m)}${m.firstError ? `; first error: ${m.firstError}` : ''}`;
}

function cpuNote(m: Measurement): string {
  if (m.serverCpuMs === undefined) return '';
  const threads = m.serverCpuMsByThread;
  const byThread = threads
    ? ` (main ${threads.main}, threadpool ${threads.threadpool}, V8 background ${threads.v8_background}, other ${threads.other})`
    : '';
  return `, CPU/request: server ${m.serverCpuMs} ms${byThread}${m.postgresCpuMs !== undefined ? ` + PostgreSQL ${m.postgresCpuMs} ms` : ''}${m.transactions !== undefined ? `, ${m.transactions} transactions/request` : ''}`;
}

const ratio = (a: Measurement, b: Measurement | undefined) => (b && b.rps > 0 ? round(a.rps / b.rps, 3) : undefined);

/** Per request, `a` minus `b` (a DPoP row minus its Bearer twin): latency, time at capacity (1 / req/s), CPU and transactions. */
function difference(a: Measurement, b: Measurement): { numbers: Record<string, number>; text: string } {
  const numbers: Record<string, number> = {
    p50_ms: round(a.p50 - b.p50, 2),
    p99_ms: round(a.p99 - b.p99, 2),
    ms_per_request_at_capacity: a.rps > 0 && b.rps > 0 ? round(1000 / a.rps - 1000 / b.rps, 3) : NaN,
  };
  if (a.serverCpuMs !== undefined && b.serverCpuMs !== undefined) numbers.server_cpu_ms = round(a.serverCpuMs - b.serverCpuMs, 2);
  if (a.postgresCpuMs !== undefined && b.postgresCpuMs !== undefined) numbers.postgres_cpu_ms = round(a.postgresCpuMs - b.postgresCpuMs, 2);
  if (a.transactions !== undefined && b.transactions !== undefined) numbers.transactions = round(a.transactions - b.transactions, 1);
  const signed = (v: number | undefined, digits = 2) =>
    v === undefined || Number.isNaN(v) ? '—' : `${v < 0 ? '−' : '+'}${Math.abs(v).toFixed(digits)}`;
  const text = [
    `p50 ${signed(numbers.p50_ms)} ms, p99 ${signed(numbers.p99_ms)} ms`,
    `time per request at capacity (1 / req/s) ${signed(numbers.ms_per_request_at_capacity, 3)} ms`,
    ...(numbers.server_cpu_ms !== undefined ? [`server CPU ${signed(numbers.server_cpu_ms)} ms`] : []),
    ...(numbers.postgres_cpu_ms !== undefined ? [`PostgreSQL CPU ${signed(numbers.postgres_cpu_ms)} ms`] : []),
    ...(numbers.transactions !== undefined ? [`transactions ${signed(numbers.transactions, 1)}`] : []),
  ].join(', ');
  return { numbers, text };
}

/** The refresh_token scenario measured against this checkout and another revision in the same run (BENCH_AB). */
interface RevisionComparison {
  revision: string;
  commit: string;
  /** Measured runs, alternating: this checkout's first (the scenario's row), then the other's, and so on. */
  current: Measurement[];
  other: Measurement[];
  /** Means over the runs of each: server CPU ms per request (in all and by kind of thread), requests/s. */
  mean: { current: MeanOfRuns; other: MeanOfRuns };
  /** The other revision's server CPU per request over this checkout's (above 1: this checkout spends less), and rps this / other. */
  cpu_ratio: number | null;
  rps_ratio: number | null;
  summary: string;
}

interface MeanOfRuns {
  rps: number;
  serverCpuMs: number | null;
  serverCpuMsByThread: Record<string, number | null> | null;
  postgresCpuMs: number | null;
  /** The highest peak RSS of the runs (a V8 setting trades memory for CPU: both are shown). */
  peakRssMb: number | null;
}

function meanOfRuns(runs: readonly Measurement[]): MeanOfRuns {
  const mean = (values: readonly (number | undefined)[]) =>
    values.every((v) => v !== undefined) ? round(values.reduce((a, b) => a! + b!, 0)! / values.length, 3) : null;
  const classes = Object.keys(runs[0]?.serverCpuMsByThread ?? {});
  return {
    rps: mean(runs.map((m) => m.rps)) ?? 0,
    serverCpuMs: mean(runs.map((m) => m.serverCpuMs)),
    serverCpuMsByThread:
      classes.length === 0
        ? null
        : Object.fromEntries(
            classes.map((c) => [c, mean(runs.map((m) => m.serverCpuMsByThread?.[c as keyof typeof m.serverCpuMsByThread]))]),
          ),
    postgresCpuMs: mean(runs.map((m) => m.postgresCpuMs)),
    peakRssMb: runs.every((m) => m.peakRssMb !== undefined) ? Math.max(...runs.map((m) => m.peakRssMb!)) : null,
  };
}

function compareRevisions(revision: string, commit: string, current: Measurement[], other: Measurement[]): RevisionComparison {
  const mean = { current: meanOfRuns(current), other: meanOfRuns(other) };
  const cpu = mean.current.serverCpuMs && mean.other.serverCpuMs ? round(mean.other.serverCpuMs / mean.current.serverCpuMs, 3) : null;
  const rps = mean.other.rps > 0 ? round(mean.current.rps / mean.other.rps, 3) : null;
  const threads = (m: MeanOfRuns) =>
    m.serverCpuMsByThread
      ? ` (${Object.entries(m.serverCpuMsByThread)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`
      : '';
  const summary =
    `this checkout ${mean.current.rps}/s, server CPU ${mean.current.serverCpuMs} ms/request${threads(mean.current)}, peak RSS ${mean.current.peakRssMb} MB; ` +
    `${revision} (${commit.slice(0, 10)}) ${mean.other.rps}/s, ${mean.other.serverCpuMs} ms/request${threads(mean.other)}, peak RSS ${mean.other.peakRssMb} MB; ` +
    `CPU ${revision}/this ${cpu ?? '—'}×, rps this/${revision} ${rps ?? '—'}× (means of ${current.length} and ${other.length} alternating runs)`;
  return { revision, commit, current, other, mean, cpu_ratio: cpu, rps_ratio: rps, summary };
}

async function main(): Promise<void> {
  const stamp = new Date();
  // The servers under test and the baselines run on this node (Node 24 unless BENCH_NODE=20); the load stays on ours.
  const childNode = serverNode(log);
  useNodeForChildren(childNode.execPath);
  const dbName = `almoner_bench_${stamp.getTime()}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  const postgresVersion = (await admin.query<{ v: string }>("select split_part(version(), ' (', 1) as v")).rows[0]!.v;
  await admin.query(`create database ${dbName}`);
  const databaseUrl = new URL(POSTGRES_URL);
  databaseUrl.pathname = `/${dbName}`;
  // The durable peer's database of its own (its table is created by the peer on start).
  const peerDbName = `almoner_bench_peer_${stamp.getTime()}`;
  await admin.query(`create database ${peerDbName}`);
  const peerDatabaseUrl = new URL(POSTGRES_URL);
  peerDatabaseUrl.pathname = `/${peerDbName}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-bench-'));
  fs.chmodSync(dataDir, 0o755);
  const children: NodeProcess[] = [];
  const track = (child: NodeProcess) => {
    children.push(child);
    return child;
  };
  let setup: AlmonerSetup | undefined;
  const interrupted = () => {
    for (const child of children) child.child.kill('SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', interrupted);

  try {
    // Each server binds its own ports (port 0) and names them in its ready file: these are the
    // URLs of the one started last, which is the server under test.
    let urls: AlmonerUrls = { api: '', sandboxApi: '', dashboard: '', sandboxDashboard: '' };
    let readyFiles = 0;
    const settings = {
      ALMONER_PROFILE: 'dev',
      ALMONER_LOG_LEVEL: 'warn',
      ALMONER_DEMO_DATA: 'false',
      // The donor flow scenario's donors are addresses of their own (X-Forwarded-For from loopback).
      ALMONER_TRUSTED_PROXIES: '127.0.0.1/32',
      ALMONER_DATA_DIR: dataDir,
      ALMONER_CLIENTS_FILE: path.join(dataDir, 'clients.json'),
      ...EPHEMERAL_URLS,
      UV_THREADPOOL_SIZE: SERVER_THREADPOOL_SIZE,
    };
    const serverEnv = cleanEnv({ ...settings, DATABASE_URL: databaseUrl.toString() });
    if (SERVER_KIND === 'dist') {
      log('building the server (npm run build → dist/)');
      buildServer();
    }
    log(
      `Almoner benchmark: database ${dbName}, ${SECONDS} s per measured run (+${WARM_SECONDS} s warm-up), scenarios: ${[...ONLY].join(', ')}`,
    );

    log('\nsetup (through src/: migrations, staff, clients, demo data)');
    setup = new AlmonerSetup(serverEnv);
    await setup.prepare({
      staff: STAFF,
      uncachedClients: ONLY.has('client_auth') ? UNCACHED_CLIENTS : 0,
      donations: DONATIONS,
      bankData: BANK_SCENARIOS.some((id) => ONLY.has(id)),
      log,
    });
    const params = setup.passwordParams;

    // ------------------------------------------------------------- start to ready (real Postgres)
    const starts: StartResult[] = [];
    const startServer = async (env: NodeJS.ProcessEnv, nodeArgs: string[] = [], entry = SERVER_ENTRY) => {
      const readyFile = path.join(dataDir, `ready-${(readyFiles += 1)}.json`);
      const t0 = performance.now();
      // The probe prints the runtime the server runs on (one JSON line), recorded with the results.
      const server = track(
        new NodeProcess(entry, { ...env, ALMONER_READY_FILE: readyFile }, [...SERVER_NODE_ARGS, '--import', RUNTIME_PROBE, ...nodeArgs]),
      );
      urls = await server.waitForReadyFile(readyFile);
      const ms = await server.waitFor(`${urls.sandboxApi}/readyz`, t0);
      const { bench_runtime: runtime } = await server.waitForJsonLine<{ bench_runtime: { node: string; v8: string } }>('bench_runtime');
      serverRuntime = { node: runtime.node, v8: runtime.v8, requested: childNode.requested, source: childNode.source };
      return { server, ms };
    };
    if (ONLY.has('start')) {
      log(`\nserver start to ready, real PostgreSQL (spawn of ${SERVER_COMMAND} → GET /readyz 200)`);
      const ms: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const { server, ms: took } = await startServer(serverEnv);
        ms.push(took);
        log(`    start ${i + 1}${i === 0 ? ' (first: generates the signing keys)' : ''}: ${(took / 1000).toFixed(2)} s`);
        await server.stop();
      }
      starts.push({ label: `real PostgreSQL, ${SERVER_COMMAND} (first, then restarts)`, ms });
      if (SERVER_KIND === 'dist') {
        const { server, ms: took } = await startServer(serverEnv, [], 'src/main.ts');
        log(`    node --import tsx src/main.ts (what npm start runs; compiles on load): ${(took / 1000).toFixed(2)} s`);
        await server.stop();
        tsxStartMs = took;
      }
    }

    log('\nstarting the server under test');
    if (MEMORY_LOG_DIR) fs.mkdirSync(MEMORY_LOG_DIR, { recursive: true });
    const nodeArgs = [
      ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}`] : []),
      ...(MEMORY_LOG_DIR ? ['--import', MEMORY_LOG] : []),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ];
    const { server, ms: loadStartMs } = await startServer(serverEnv, nodeArgs);
    const pid = server.pid;
    const backends =
      (application: string, database = dbName) =>
      async () =>
        (
          await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and application_name = $2', [
            database,
            application,
          ])
        ).rows.map((r) => r.pid);
    const serverBackends = backends('almoner');
    // A backend publishes its counts to pg_stat_database when it goes idle, but at most once a
    // second: what it did in its last second shows up only after a 10 s idle timeout. So each
    // reading waits a second, then has every pooled backend run one more transaction (cheap
    // requests that touch the database, more than the pool holds), which flushes them, and
    // discounts those transactions.
    const transactionsVia = (poke: () => Promise<unknown>, database = dbName) => {
      let poked = 0;
      return async () => {
        await sleep(1100);
        await Promise.all(Array.from({ length: POKES }, () => poke()));
        poked += POKES;
        await sleep(200);
        const row = (
          await admin.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [database])
        ).rows[0];
        return Number(row?.n ?? 0) - poked;
      };
    };
    const transactions = transactionsVia(() => fetch(`${urls.sandboxApi}/readyz`).then((r) => r.text()));
    const baselineBackends = backends('almoner-bench-baseline');
    log(`    server runtime: Node ${serverRuntime?.node} (V8 ${serverRuntime?.v8}; ${childNode.source}, ${childNode.execPath})`);
    log(`    ready in ${(loadStartMs / 1000).toFixed(2)} s, pid ${pid}, RSS ${((rssBytes(pid) ?? 0) / 1048576).toFixed(0)} MB`);
    const scenarios: ScenarioResult[] = [];
    const revisionComparisons: (RevisionComparison & { node_args: string[] })[] = [];
    let giftProvider: Awaited<ReturnType<typeof benchProvider>> | undefined;
    const argon2: Record<string, unknown> = {};

    // ------------------------------------------------------------- the provider baselines
    // The same bare oidc-provider (bench/lib/bare-oidc.ts) twice, each in a process of its own:
    // on the library's in-memory adapter (the limit) and on a one-table Postgres adapter in a
    // database of its own (the durable peer, what a team would run instead of Almoner).
    const peerBackends = backends('almoner-bench-peer', peerDbName);
    const providerBaseline = async (
      kind: 'memory' | 'durable',
      run: (origin: string, adminOrigin: string, pid: number) => Promise<Measurement>,
      extraEnv: Record<string, string> = {},
    ) => {
      const entry = kind === 'memory' ? 'bench/baseline/bare-provider.ts' : 'bench/baseline/durable-provider.ts';
      const env = cleanEnv({
        PORT: '0',
        ADMIN_PORT: '0',
        CLIENT_ID: 'bare-client',
        CLIENT_SECRET: setup!.client.client_secret,
        REDIRECT_URI,
        DATABASE_URL: kind === 'durable' ? peerDatabaseUrl.toString() : undefined,
        ...extraEnv,
      });
      // Profiled too under BENCH_CPU_PROF (in <dir>/memory and <dir>/durable), to compare where the time goes.
      const bare = track(
        new NodeProcess(entry, env, [
          ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR, kind)}`] : []),
          ...BASELINE_NODE_ARGS,
        ]),
      );
      const { port, admin_port: adminPort } = await bare.waitForJsonLine<{ port: number; admin_port: number }>('ready');
      try {
        return await run(`http://127.0.0.1:${port}`, `http://127.0.0.1:${adminPort}`, bare.pid);
      } finally {
        await bare.stop();
      }
    };
    const bareClient: Client = { client_id: 'bare-client', client_secret: setup.client.client_secret };
    const mintBare = async <T>(adminOrigin: string, kind: string, n: number, scope?: string) =>
      (
        (await (await fetch(`${adminOrigin}/mint/${kind}?n=${n}${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`)).json()) as {
          items: T[];
        }
      ).items;
    /** A token scenario's two baselines, in-memory first, then the durable peer (its PostgreSQL CPU and transactions counted as Almoner's are). */
    const tokenBaselines = async <T>(kind: 'refresh' | 'code', request: (item: T) => HttpRequestSpec) => {
      const memory = await providerBaseline('memory', (origin, adminOrigin, bpid) =>
        consuming('bare oidc-provider, in-memory', { origin, pid: bpid, mint: (n) => mintBare<T>(adminOrigin, kind, n), request }),
      );
      const durable = await providerBaseline('durable', (origin, adminOrigin, bpid) => {
        const poke = () => fetch(`${adminOrigin}/poke`).then((r) => r.text());
        return consuming('durable peer (bare oidc-provider, Postgres adapter)', {
          origin,
          pid: bpid,
          postgresPids: peerBackends,
          postgresTransactions: transactionsVia(poke, peerDbName),
          mint: (n) => mintBare<T>(adminOrigin, kind, n),
          afterMint: async () => {
            await sleep(1100);
            await Promise.all(Array.from({ length: POKES }, poke));
          },
          request,
        });
      });
      return { memory, durable };
    };
    const MEMORY_LABEL = 'bare oidc-provider, in-memory adapter, same settings';
    const PEER_LABEL = 'the same bare oidc-provider on a one-table Postgres adapter (jsonb payload, one query per adapter call, no cache)';
    /** The token targets (docs/benchmarks.md): ≥ 1.5× the durable peer and ≥ 0.6× the in-memory provider. */
    const TOKEN_TARGET = '≥ 1.5× durable peer; ≥ 0.6× in-memory';
    const tokenChecks = (toPeer: number | undefined, toMemory: number | undefined): Check[] => [
      { label: '≥ 1.5× durable peer', met: (toPeer ?? 0) >= 1.5 },
      { label: '≥ 0.6× in-memory', met: (toMemory ?? 0) >= 0.6 },
    ];

    /** The refresh_token scenario's Almoner side against the server at `origin` (the one under test, or the workers=2 one). */
    const almonerRefresh = (label: string, origin: string, serverPid: number, tree: boolean, tx: () => Promise<number>) =>
      consuming(label, {
        origin,
        pid: serverPid,
        tree,
        postgresPids: serverBackends,
        postgresTransactions: tx,
        mint: (n) => setup!.mintRefreshTokens(n),
        afterMint: () => setup!.settleStatistics(),
        request: (t) => refreshRequest(setup!.client, t),
      });

    // The donations scenario's requests: pages starting at random page tokens (set by the scenario, or by the workers one).
    let donationPages: string[] = [];
    let page = 0;
    const nextPath = () => {
      page = (page + 1) % (donationPages.length + 1);
      // One request in 2,001 asks for the first page; the others start at a random place.
      return page === donationPages.length ? '/v1/donations' : `/v1/donations?page_token=${donationPages[page]}`;
    };
    /** Access tokens from the token endpoint of the server at `origin`, one per connection. */
    const accessTokensOf = async (origin: string) => {
      const refresh = await setup!.mintRefreshTokens(GATEWAY_CONNECTIONS);
      const accessTokens = await Promise.all(
        refresh.map(async (token) => {
          const res = await fetch(`${origin}/auth/oauth/token`, {
            method: 'POST',
            headers: { authorization: basic(setup!.client), 'content-type': FORM },
            body: form({ grant_type: 'refresh_token', refresh_token: token }),
          });
          const body = (await res.json()) as { access_token?: string };
          if (!body.access_token) throw new Error(`no access token: ${JSON.stringify(body)}`);
          return body.access_token;
        }),
      );
      await setup!.settleStatistics();
      return accessTokens;
    };
    /** Authenticated donations requests to the server at `origin`: access tokens from its token endpoint, one per connection, rotated over the requests. */
    const donationsRequests = async (origin: string) => {
      const accessTokens = await accessTokensOf(origin);
      let k = 0;
      return () => ({
        method: 'GET' as const,
        path: nextPath(),
        headers: { authorization: `Bearer ${accessTokens[(k += 1) % accessTokens.length]}` },
      });
    };

    if (ONLY.has('refresh')) {
      log('\nscenario: refresh_token grant (rotation, argon2id client secret)');
      const { memory, durable } = await tokenBaselines<string>('refresh', (t) => refreshRequest(bareClient, t));
      const almoner = await almonerRefresh('Almoner', urls.sandboxApi, pid, false, transactions);
      if (AB_REVISIONS.length > 0) {
        const others = AB_REVISIONS.map(({ revision, nodeArgs }) => ({
          revision,
          nodeArgs,
          label: [revision, ...nodeArgs].join(' '),
          ...buildRevision(revision),
          runs: [] as Measurement[],
        }));
        log(`    same-run comparison with ${others.map((o) => o.label).join(', ')}: ${AB_ROUNDS} measured runs of each, in turn`);
        // startServer names the last server started in `urls`: the one under test stays this checkout's.
        const mine = urls;
        const started = [];
        try {
          for (const other of others) {
            const { server: otherServer } = await startServer(serverEnv, other.nodeArgs, other.entry);
            started.push({ other, server: otherServer, origin: urls.sandboxApi });
          }
          urls = mine;
          const current = [almoner];
          for (let round = 1; round <= AB_ROUNDS; round += 1) {
            for (const { other, server: otherServer, origin } of started)
              other.runs.push(await almonerRefresh(`Almoner @${other.label}, run ${round}`, origin, otherServer.pid, false, transactions));
            if (round < AB_ROUNDS)
              current.push(await almonerRefresh(`Almoner (this checkout), run ${round + 1}`, urls.sandboxApi, pid, false, transactions));
          }
          for (const other of others) {
            const comparison = { ...compareRevisions(other.label, other.commit, current, other.runs), node_args: other.nodeArgs };
            revisionComparisons.push(comparison);
            log(`    ${comparison.summary}`);
          }
        } finally {
          urls = mine;
          for (const { server: otherServer } of started) await otherServer.stop();
        }
      }
      const r = ratio(almoner, memory);
      const toPeer = ratio(almoner, durable);
      scenarios.push({
        id: 'refresh',
        title: 'refresh_token grant (rotation, argon2id client secret)',
        almoner,
        baseline: memory,
        baselineLabel: MEMORY_LABEL,
        ratio: r,
        peer: { label: PEER_LABEL, measurement: durable, ratio: toPeer },
        target: TOKEN_TARGET,
        checks: tokenChecks(toPeer, r),
        detail: `${TOKEN_CONNECTIONS} connections; every request presents its own pre-minted refresh token (scope "${SCOPE}", so an RS256 id_token too), each the first of its own authorization's chain, minted through the provider's models; the client's secret is the same 256-bit value in all three, an argon2id hash in Almoner (cached after the first check), a plain string in both baselines.`,
      });
    }

    // ------------------------------------------------------------- the ID token on refresh (information)
    // What the RS256 signature of a refresh's id_token costs, and what ES256 or no id_token would
    // give (OpenID Connect Core §12.2 lets a refresh answer without one): a decision for later, the
    // default unchanged (docs/benchmarks.md, "The ID token on refresh").
    if (ONLY.has('id_token')) {
      log('\nscenario: the id_token of a refresh (information): RS256 (the default), ES256, none');
      const NO_OPENID = 'read_only';
      const refreshRow = scenarios.find((s) => s.id === 'refresh');
      const bareRefresh = (label: string, scope?: string) => (origin: string, adminOrigin: string, bpid: number) =>
        consuming(label, {
          origin,
          pid: bpid,
          mint: (n) => mintBare<string>(adminOrigin, 'refresh', n, scope),
          request: (t) => refreshRequest(bareClient, t),
        });
      const memoryRs256 =
        refreshRow?.baseline ?? (await providerBaseline('memory', bareRefresh('bare oidc-provider, in-memory, RS256 id_token')));
      const memoryEs256 = await providerBaseline('memory', bareRefresh('bare oidc-provider, in-memory, ES256 id_token'), {
        ID_TOKEN_ALG: 'ES256',
      });
      const memoryNone = await providerBaseline('memory', bareRefresh('bare oidc-provider, in-memory, no id_token', NO_OPENID));
      const almonerRs256 =
        refreshRow?.almoner ?? (await almonerRefresh('Almoner, RS256 id_token', urls.sandboxApi, pid, false, transactions));
      const almonerNone = await consuming('Almoner, no id_token (scope without openid)', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        mint: (n) => setup!.mintRefreshTokens(n, NO_OPENID),
        afterMint: () => setup!.settleStatistics(),
        request: (t) => refreshRequest(setup!.client, t),
      });
      const cpu = (m: Measurement) => `${m.serverCpuMs ?? '—'} ms (threadpool ${m.serverCpuMsByThread?.threadpool ?? '—'}), ${m.rps}/s`;
      const idTokenCpu = {
        memory_rs256: memoryRs256.serverCpuMs ?? null,
        memory_es256: memoryEs256.serverCpuMs ?? null,
        memory_none: memoryNone.serverCpuMs ?? null,
        almoner_rs256: almonerRs256.serverCpuMs ?? null,
        almoner_none: almonerNone.serverCpuMs ?? null,
      };
      log(
        `    server CPU per refresh: in-memory provider RS256 ${cpu(memoryRs256)}, ES256 ${cpu(memoryEs256)}, none ${cpu(memoryNone)}; Almoner RS256 ${cpu(almonerRs256)}, none ${cpu(almonerNone)}`,
      );
      scenarios.push({
        id: 'id_token',
        title: 'refresh_token grant without an id_token (scope without openid)',
        almoner: almonerNone,
        baseline: almonerRs256,
        baselineLabel: `the refresh_token grant with its RS256 id_token (${refreshRow ? 'the refresh_token grant row above' : 'measured for this row'}, same run)`,
        ratio: ratio(almonerNone, almonerRs256),
        target: 'information (no target): what the id_token of a refresh costs; RS256 stays the default',
        checks: [],
        id_token_cpu_ms: idTokenCpu,
        detail: `${TOKEN_CONNECTIONS} connections, the refresh_token scenario's runs; the same pre-minted tokens but with scope "${NO_OPENID}" (no openid, so the answer has no id_token). Server CPU per refresh, same run: the bare in-memory provider with an RS256 id_token ${cpu(memoryRs256)}, with an ES256 one ${cpu(memoryEs256)}, with none ${cpu(memoryNone)}; Almoner with its RS256 id_token ${cpu(almonerRs256)}, with none ${cpu(almonerNone)}.`,
      });
    }

    // ------------------------------------------------------------- bank data: DPoP beside Bearer
    // The sandbox issuer as discovery names it: a client assertion's aud; its token endpoint, a token request's proof's htu.
    let discovered: { issuer: string; token_endpoint: string } | undefined;
    const discovery = async () =>
      (discovered ??= (await (await fetch(`${urls.sandboxApi}/.well-known/openid-configuration`)).json()) as {
        issuer: string;
        token_endpoint: string;
      });
    /** A fapi2 refresh's items: `n` pre-minted DPoP-bound refresh tokens, then for each a fresh proof and assertion (made last, so they are seconds old when sent). */
    const fapiRefreshItems = async (n: number) => {
      const fapi2 = setup!.bank!.fapi2;
      const { issuer, token_endpoint: tokenEndpoint } = await discovery();
      const tokens = await setup!.mintBankRefreshTokens('fapi2', n);
      return makeMany(n, async (i) => ({
        token: tokens[i]!,
        proof: await dpopProof(fapi2.dpopKey, { method: 'POST', url: tokenEndpoint }),
        assertion: await clientAssertion(fapi2.signingKey, fapi2.client_id, issuer),
      }));
    };

    if (ONLY.has('dpop_refresh')) {
      log('\nscenario: refresh_token grant, DPoP-bound (fapi2 client: private_key_jwt and a DPoP proof per request, no rotation)');
      const fapi2 = setup.bank!.fapi2;
      let bearer = scenarios.find((s) => s.id === 'refresh')?.almoner;
      const fromRow = bearer !== undefined;
      bearer ??= await almonerRefresh('Almoner, Bearer (refresh is not in BENCH_ONLY)', urls.sandboxApi, pid, false, transactions);
      const almoner = await consuming('Almoner, DPoP', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        mint: fapiRefreshItems,
        afterMint: () => setup!.settleStatistics(),
        request: (item) => fapiRefreshRequest(fapi2.client_id, item),
      });
      const diff = difference(almoner, bearer);
      log(`    DPoP / Bearer: ${ratio(almoner, bearer) ?? '—'}×; per request, DPoP minus Bearer: ${diff.text}`);
      scenarios.push({
        id: 'dpop_refresh',
        title: 'refresh_token grant, DPoP-bound (fapi2: private_key_jwt, DPoP proof, no rotation)',
        almoner,
        baseline: bearer,
        baselineLabel: `the Bearer refresh_token grant (standard client, argon2id secret, rotation): ${fromRow ? 'the refresh_token grant row above' : 'measured for this row'}, same run`,
        ratio: ratio(almoner, bearer),
        target: 'information (no target): what DPoP and private_key_jwt cost per refresh',
        checks: [],
        detail: `${TOKEN_CONNECTIONS} connections, the refresh_token scenario's calibration, warm-up and measured runs; every request presents its own pre-minted refresh token of a fapi2 client (scope "${BANK_SCOPE}", so an ES256 id_token), each the first use of its own authorization, recorded as the consent screen records one with its FDX consent (both accounts) and bound to the client's ES256 DPoP key (jkt), minted through the provider's models; each request carries its own DPoP proof (htm POST, htu the token endpoint, unique jti) and private_key_jwt client assertion (ES256, aud the issuer, unique jti), both made by the harness right before the run, after its tokens. The server verifies both signatures, claims both jti in replay_marks (one insert each), keeps the refresh token (no rotation) and moves its expiry (one read of the consent, one update); the Bearer twin checks a cached client secret and rotates. Per request, DPoP minus Bearer: ${diff.text}.`,
        difference_to_baseline: diff.numbers,
      });
    }

    if (ONLY.has('code')) {
      log('\nscenario: authorization_code grant (pre-minted codes, PKCE S256)');
      const { memory, durable } = await tokenBaselines<{ code: string; verifier: string }>('code', (c) => codeRequest(bareClient, c));
      const almoner = await consuming('Almoner', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        mint: (n) => setup!.mintCodes(n),
        afterMint: () => setup!.settleStatistics(),
        request: (c) => codeRequest(setup!.client, c),
      });
      const r = ratio(almoner, memory);
      const toPeer = ratio(almoner, durable);
      scenarios.push({
        id: 'code',
        title: 'authorization_code grant (pre-minted codes, PKCE)',
        almoner,
        baseline: memory,
        baselineLabel: MEMORY_LABEL,
        ratio: r,
        peer: { label: PEER_LABEL, measurement: durable, ratio: toPeer },
        target: TOKEN_TARGET,
        checks: tokenChecks(toPeer, r),
        detail: `${TOKEN_CONNECTIONS} connections; each code is minted (S256 challenge) through the provider's models right before its run, for an existing authorization, and exchanged once with its verifier and redirect_uri.`,
      });
    }

    if (ONLY.has('donations')) {
      log(
        `\nscenario: GET /v1/donations (access token + role check + page query over ${DONATIONS.toLocaleString('en-US')} donations), ${GATEWAY_CONNECTIONS} connections`,
      );
      donationPages = await setup.pageTokens(2000);
      const explain = await setup.explainPageQuery(donationPages[0]!);
      const koa = track(
        new NodeProcess(
          'bench/baseline/donations-endpoint.ts',
          cleanEnv({ PORT: '0', DATABASE_URL: databaseUrl.toString(), ORG_ID: setup.orgId, ENVIRONMENT }),
        ),
      );
      const { port } = await koa.waitForJsonLine<{ port: number }>('ready');
      // A page from both servers, compared once Almoner's tokens are minted (the same JSON, logged).
      const koaPage = await fetch(`http://127.0.0.1:${port}/v1/donations?page_token=${donationPages[0]!}`).then((r) => r.text());
      await setup.settleStatistics();
      let baseline: Measurement;
      let baselinePaced: Measurement;
      // The paced runs offer half of what the baseline answered closed-loop, to both servers.
      let pacedRate = 0;
      try {
        const koaTransactions = transactionsVia(() => fetch(`http://127.0.0.1:${port}/v1/donations?limit=1`).then((r) => r.text()));
        baseline = await repeating('Koa + pg, no authentication', {
          origin: `http://127.0.0.1:${port}`,
          pid: koa.pid,
          postgresPids: baselineBackends,
          postgresTransactions: koaTransactions,
          connections: GATEWAY_CONNECTIONS,
          next: () => ({ method: 'GET', path: nextPath(), headers: {} }),
        });
        pacedRate = Math.max(1, Math.round(baseline.rps / 2));
        baselinePaced = await runPaced({
          origin: `http://127.0.0.1:${port}`,
          connections: GATEWAY_CONNECTIONS,
          seconds: SECONDS,
          rate: pacedRate,
          next: () => ({ method: 'GET', path: nextPath(), headers: {} }),
        });
        log(
          `    Koa + pg at a steady ${pacedRate}/s (half its capacity): p50 ${baselinePaced.p50} ms, p99 ${baselinePaced.p99} ms, ${baselinePaced.errors} errors`,
        );
      } finally {
        await koa.stop();
      }
      // Access tokens from the real token endpoint, one per connection.
      const almonerNext = await donationsRequests(urls.sandboxApi);
      const almonerPage = await fetch(`${urls.sandboxApi}/v1/donations?page_token=${donationPages[0]!}`, {
        headers: almonerNext().headers,
      }).then((r) => r.text());
      log(`    a page from both servers: ${sameJson(almonerPage, koaPage) ? 'the same JSON' : 'different JSON'}`);
      const almoner = await repeating('Almoner', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        connections: GATEWAY_CONNECTIONS,
        next: almonerNext,
      });
      const paced = await runPaced({
        origin: urls.sandboxApi,
        connections: GATEWAY_CONNECTIONS,
        seconds: SECONDS,
        rate: pacedRate,
        next: almonerNext,
      });
      log(`    Almoner at a steady ${pacedRate}/s: p50 ${paced.p50} ms, p99 ${paced.p99} ms, ${paced.errors} errors`);
      const r = ratio(almoner, baseline);
      const p99Bound = round(baselinePaced.p99 * 1.5, 2);
      scenarios.push({
        id: 'donations',
        title: `authenticated GET /v1/donations (${GATEWAY_CONNECTIONS} connections)`,
        almoner,
        baseline,
        baselineLabel: 'Koa + pg endpoint, same queries (the page, its property values) and JSON, no authentication',
        ratio: r,
        target: "≥ 0.9× baseline; at a steady half of the baseline's capacity, p99 ≤ 1.5× the baseline's p99 at that pace",
        checks: [
          { label: '≥ 0.9×', met: (r ?? 0) >= 0.9 },
          {
            label: `paced ${pacedRate}/s: p99 ${paced.p99} ms ≤ 1.5 × ${baselinePaced.p99} ms = ${p99Bound} ms${paced.errors ? ` (${paced.errors} errors)` : ''}`,
            met: paced.errors === 0 && paced.p99 <= p99Bound,
          },
        ],
        detail: `pages of 100 (the default limit; about 70 KB of JSON each), starting at 2,000 random page tokens over the nonprofit's ${DONATIONS.toLocaleString('en-US')} donations (and now and then the first page); ${GATEWAY_CONNECTIONS} access tokens from the token endpoint, rotated over the requests; both servers use a pool of 10 connections. Paced (open-loop) runs: the same ${GATEWAY_CONNECTIONS} connections offering a steady ${pacedRate} requests/s (half of the baseline's ${baseline.rps}/s above) instead of as many as answered, latency counted from when each request was due: Almoner p50 ${paced.p50} ms, p99 ${paced.p99} ms (${paced.errors} errors); the baseline p50 ${baselinePaced.p50} ms, p99 ${baselinePaced.p99} ms (${baselinePaced.errors} errors).`,
        paced: { rate: pacedRate, almoner: paced, baseline: baselinePaced },
      });
      benchExplain = explain;
    }

    // The gateway's proof check itself, in this process (measured first, so the DPoP row can cite it; its row comes after).
    type ProofCheck = Awaited<ReturnType<typeof measureProofCheck>>;
    let proofCheck: { es256: ProofCheck; ps256: ProofCheck; eddsa: ProofCheck } | undefined;
    if (ONLY.has('dpop_check')) {
      log(
        `\nthe gateway's DPoP proof check itself (verifyProof of src/gateway/auth/dpop-proof.ts, in this process, no database): ${PROOF_CHECKS.toLocaleString('en-US')} ES256 proofs, ${PROOF_CHECKS_OTHER.toLocaleString('en-US')} PS256 and EdDSA`,
      );
      proofCheck = {
        es256: await measureProofCheck('ES256', PROOF_CHECKS),
        ps256: await measureProofCheck('PS256', PROOF_CHECKS_OTHER),
        eddsa: await measureProofCheck('EdDSA', PROOF_CHECKS_OTHER),
      };
      for (const [alg, { check: m, signature }] of Object.entries(proofCheck))
        log(
          `    ${alg}: ${m.cpuUsPerProof} µs of CPU per proof; wall ${m.usPerProof} µs per proof (p50 ${round(m.p50 * 1000, 1)} µs, p99 ${round(m.p99 * 1000, 1)} µs), ${m.rps.toLocaleString('en-US')} proofs/s; the signature alone (node:crypto): ${signature.cpuUsPerProof} µs of CPU`,
        );
    }

    if (ONLY.has('fdx') || ONLY.has('dpop_fdx')) {
      const bank = setup.bank!;
      /** Access tokens from the token endpoint, one per connection (rotated over the requests): Bearer for the standard client, DPoP-bound for the fapi2 one. */
      const fdxAccessTokens = async (kind: 'standard' | 'fapi2') => {
        const refresh =
          kind === 'fapi2'
            ? await fapiRefreshItems(GATEWAY_CONNECTIONS)
            : (await setup!.mintBankRefreshTokens('standard', GATEWAY_CONNECTIONS)).map((token) => ({ token, proof: '', assertion: '' }));
        const tokens = await Promise.all(
          refresh.map(async (item) => {
            const spec = kind === 'fapi2' ? fapiRefreshRequest(bank.fapi2.client_id, item) : refreshRequest(bank.standard, item.token);
            const res = await fetch(`${urls.sandboxApi}${spec.path}`, { method: spec.method, headers: spec.headers, body: spec.body });
            const body = (await res.json()) as { access_token?: string; token_type?: string };
            const expected = kind === 'fapi2' ? 'DPoP' : 'Bearer';
            if (!body.access_token || body.token_type !== expected)
              throw new Error(`no ${expected} access token: ${res.status} ${JSON.stringify(body)}`);
            return body.access_token;
          }),
        );
        await setup!.settleStatistics();
        return tokens;
      };
      const fdxRun = async (label: string, kind: 'standard' | 'fapi2') => {
        const tokens = await fdxAccessTokens(kind);
        const url = `${urls.sandboxApi}${FDX_PATH}`;
        let k = 0;
        const nextToken = () => tokens[(k += 1) % tokens.length]!;
        return consuming(label, {
          origin: urls.sandboxApi,
          pid,
          connections: GATEWAY_CONNECTIONS,
          postgresPids: serverBackends,
          postgresTransactions: transactions,
          // The Bearer run has nothing to make; it goes through the same phases (and the same pause) all the same.
          mint: (n) =>
            kind === 'fapi2'
              ? makeMany(n, async () => {
                  const token = nextToken();
                  return { scheme: 'DPoP', token, proof: await dpopProof(bank.fapi2.dpopKey, { method: 'GET', url, accessToken: token }) };
                })
              : Promise.resolve(Array.from({ length: n }, () => ({ scheme: 'Bearer', token: nextToken(), proof: '' }))),
          afterMint: () => setup!.settleStatistics(),
          request: (item) => ({
            method: 'GET',
            path: FDX_PATH,
            headers: { authorization: `${item.scheme} ${item.token}`, ...(item.proof ? { dpop: item.proof } : {}) },
          }),
        });
      };
      const fdxMethod = `${GATEWAY_CONNECTIONS} connections, GET ${FDX_PATH} (the organization's 2 deposit accounts, one page) with calibration, warm-up and measured runs sized from the warm-up's rate, as the token scenarios; ${GATEWAY_CONNECTIONS} access tokens of the admin's authorizations (scope "${BANK_SCOPE}") from the token endpoint, rotated over the requests`;
      let bearer = scenarios.find((s) => s.id === 'fdx')?.almoner;
      if (ONLY.has('fdx')) {
        log(`\nscenario: GET ${FDX_PATH} with a Bearer access token (standard client), ${GATEWAY_CONNECTIONS} connections`);
        bearer = await fdxRun('Almoner, Bearer', 'standard');
        scenarios.push({
          id: 'fdx',
          title: `FDX GET ${FDX_PATH}, Bearer access token (${GATEWAY_CONNECTIONS} connections)`,
          almoner: bearer,
          baselineLabel: '— (the Bearer twin of the DPoP row below)',
          target: 'information (no target)',
          checks: [],
          detail: `${fdxMethod}; a standard client's tokens (no FDX consent: every account of the organization, the same two).`,
        });
      }
      if (ONLY.has('dpop_fdx')) {
        log(
          `\nscenario: GET ${FDX_PATH} with a DPoP-bound access token (fapi2 client) and a fresh proof per request, ${GATEWAY_CONNECTIONS} connections`,
        );
        const fromRow = bearer !== undefined;
        bearer ??= await fdxRun('Almoner, Bearer (fdx is not in BENCH_ONLY)', 'standard');
        const almoner = await fdxRun('Almoner, DPoP', 'fapi2');
        const diff = difference(almoner, bearer);
        log(`    DPoP / Bearer: ${ratio(almoner, bearer) ?? '—'}×; per request, DPoP minus Bearer: ${diff.text}`);
        const check = proofCheck
          ? `; of the server CPU, the proof check itself (the dpop_check row) is ${proofCheck.es256.check.cpuUsPerProof} µs`
          : '';
        scenarios.push({
          id: 'dpop_fdx',
          title: `FDX GET ${FDX_PATH}, DPoP-bound access token and proof (${GATEWAY_CONNECTIONS} connections)`,
          almoner,
          baseline: bearer,
          baselineLabel: `the same call with a Bearer access token (standard client): ${fromRow ? 'the row above' : 'measured for this row'}, same run`,
          ratio: ratio(almoner, bearer),
          target: 'information (no target): what DPoP costs per call',
          checks: [],
          detail: `${fdxMethod}; a fapi2 client's tokens, bound to its ES256 DPoP key, each authorization with its FDX consent choosing both accounts; every request carries \`Authorization: DPoP\` and its own proof (htm GET, htu the URL, ath of the token, unique jti), made by the harness right before each run (seconds old when sent; the gateway accepts 60 s), so the gateway verifies the proof and claims its jti in replay_marks (one insert) on every call. Per request, DPoP minus Bearer: ${diff.text}${check}.`,
          difference_to_baseline: diff.numbers,
        });
      }
    }

    if (proofCheck) {
      const { es256, ps256, eddsa } = proofCheck;
      const of = (m: ProofCheckMeasurement) =>
        `${m.cpuUsPerProof} µs of CPU (wall ${m.usPerProof} µs; p50 / p99 ${round(m.p50 * 1000, 1)} / ${round(m.p99 * 1000, 1)} µs)`;
      const both = (c: ProofCheck) => `${of(c.check)}, the signature alone ${c.signature.cpuUsPerProof} µs of CPU`;
      scenarios.push({
        id: 'dpop_check',
        title: "DPoP proof check itself (the gateway's verifyProof, ES256), proofs/s",
        almoner: es256.check,
        baseline: es256.signature,
        baselineLabel: 'the signature alone: node:crypto verify of the same proofs, the key imported once',
        ratio: ratio(es256.check, es256.signature),
        target: '< 1 ms of CPU per proof',
        checks: [{ label: `${es256.check.cpuUsPerProof} µs of CPU per proof < 1,000 µs`, met: es256.check.cpuUsPerProof < 1000 }],
        detail: `src/gateway/auth/dpop-proof.ts's verifyProof, in the harness process (the same code and jose as the server, one proof at a time): jose jwtVerify with the proof's key (typ dpop+jwt, the algorithm; the key imported from the proof's header once per key and cached by its RFC 7638 thumbprint), the iat, jti, htm, htu and ath checks, over ${PROOF_CHECKS.toLocaleString('en-US')} ES256 proofs made beforehand (after ${Math.round(PROOF_CHECKS / 10)} of warm-up); the database insert the gateway adds (replay_marks) is left out. The CPU time is the process's (all threads) over the checks, divided by the proofs; the wall time and the p50 / p99 columns (ms per proof) include waiting for a core. The baseline is the floor: node:crypto's verify of the same signatures with a key imported once. ES256 ${both(es256)}; PS256 (RSA 2048) ${both(ps256)}; EdDSA (Ed25519) ${both(eddsa)}, ${PROOF_CHECKS_OTHER.toLocaleString('en-US')} proofs each.`,
        proof_check_us: {
          ES256_cpu: es256.check.cpuUsPerProof,
          ES256_wall: es256.check.usPerProof,
          ES256_signature_cpu: es256.signature.cpuUsPerProof,
          PS256_cpu: ps256.check.cpuUsPerProof,
          PS256_wall: ps256.check.usPerProof,
          PS256_signature_cpu: ps256.signature.cpuUsPerProof,
          EdDSA_cpu: eddsa.check.cpuUsPerProof,
          EdDSA_wall: eddsa.check.usPerProof,
          EdDSA_signature_cpu: eddsa.signature.cpuUsPerProof,
        },
      });
    }

    if (ONLY.has('flow')) {
      log('\nscenario: full code flow (argon2id sign-in, consent, exchange)');
      const all = await argon2Rate(4, 5, params);
      argon2['verify/s, 4 in flight (all cores), configured parameters'] = all.rate;
      log(`    argon2.verify, 4 in flight: ${all.rate.toFixed(1)}/s (p50 ${all.p50.toFixed(1)} ms)`);
      const server4 = { urls } as unknown as OAuthTestServer;
      const flowOnce = async (worker: number) => {
        const user = setup!.staff[worker % setup!.staff.length]!;
        const result = await authorize(server4, {
          environment: ENVIRONMENT,
          clientId: setup!.client.client_id,
          redirectUri: REDIRECT_URI,
          scope: SCOPE,
          login: { email: user.email, password: user.password },
          extraParams: { prompt: 'consent' },
        });
        const code = result.callback.searchParams.get('code');
        if (!code) throw new Error(`no code: ${result.callback}`);
        const tokens = await tokenRequest(server4, ENVIRONMENT, setup!.client, {
          grant_type: 'authorization_code',
          code,
          code_verifier: result.verifier,
        });
        if (tokens.status !== 200) throw new Error(`token ${tokens.status}: ${JSON.stringify(tokens.body)}`);
      };
      await runWorkers({ concurrency: FLOW_WORKERS, seconds: WARM_SECONDS, task: flowOnce });
      // The user agents run in this process, on the same two cores: their CPU per flow is part of the budget the flow rate divides.
      const agentCpuBefore = process.cpuUsage();
      const almoner = await runWorkers({
        concurrency: FLOW_WORKERS,
        seconds: SECONDS,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        task: flowOnce,
      });
      const agentCpu = process.cpuUsage(agentCpuBefore);
      const agentMsPerFlow = almoner.completed > 0 ? round((agentCpu.user + agentCpu.system) / 1000 / almoner.completed, 2) : undefined;
      log(
        `    Almoner: ${almoner.rps} flows/s, p50 ${almoner.p50} ms, p99 ${almoner.p99} ms, ${almoner.errors} errors${cpuNote(almoner)}; user agents (this process) ${agentMsPerFlow ?? '—'} ms CPU/flow${almoner.firstError ? `; first error: ${almoner.firstError}` : ''}`,
      );
      const baseline: Measurement = {
        rps: round(all.rate, 1),
        p50: round(all.p50, 2),
        p99: round(all.p99, 2),
        errors: 0,
        completed: all.completed,
        seconds: round(all.seconds, 2),
        concurrency: 4,
      };
      const r = ratio(almoner, baseline);
      const owasp = params.memoryKib >= 19_456 && params.timeCost >= 2 && params.parallelism >= 1;
      scenarios.push({
        id: 'flow',
        title: 'full code flow (sign-in with argon2id password, consent, exchange), flows/s',
        almoner,
        baseline,
        baselineLabel: `argon2.verify/s at the configured parameters (m=${params.memoryKib} KiB, t=${params.timeCost}, p=${params.parallelism}), 4 in flight`,
        ratio: r,
        target: '≤ 12 transactions per flow; ≥ 0.6× baseline; parameters ≥ OWASP minimum',
        checks: [
          {
            label: `≤ 12 transactions per flow (${almoner.transactions ?? '—'})`,
            met: almoner.transactions !== undefined && almoner.transactions <= 12,
          },
          { label: '≥ 0.6×', met: (r ?? 0) >= 0.6 },
          { label: 'parameters ≥ 19 MiB, t=2, p=1', met: owasp },
        ],
        detail: `${FLOW_WORKERS} concurrent user agents (the test suite's FormBrowser: cookies, redirects, forms), each flow with a fresh agent: GET /authorize (prompt=consent) → sign-in page → POST sign-in (one argon2id verification) → consent page → POST consent (new authorization) → redirect with the code → POST /token. About 8 HTTP requests per flow; latency columns are per flow. The user agents themselves (in the bench process, on the same cores) used ${agentMsPerFlow ?? '—'} ms of CPU per flow.`,
        agent_cpu_ms_per_flow: agentMsPerFlow,
      });
    }

    if (ONLY.has('client_auth')) {
      log('\nscenario: client authentication, cached vs uncached argon2id (POST /auth/oauth/introspect of an unknown token)');
      const one = await argon2Rate(1, 5, params);
      argon2['verify/s, 1 in flight (one core), configured parameters'] = one.rate;
      const defaults = await argon2Rate(1, 3, { memoryKib: 65_536, timeCost: 3, parallelism: 4 });
      argon2["verify/s, 1 in flight, the library's defaults (m=64 MiB, t=3, p=4)"] = defaults.rate;
      log(`    argon2.verify on one core: ${one.rate.toFixed(1)}/s; at the library's defaults: ${defaults.rate.toFixed(1)}/s`);
      const cached = await repeating('cached (one client, its check remembered)', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        connections: TOKEN_CONNECTIONS,
        next: () => introspectRequest(setup!.client),
      });
      let i = 0;
      const uncached = await runLoad({
        origin: urls.sandboxApi,
        connections: 4,
        amount: setup.uncachedClients.length,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        next: () => introspectRequest(setup!.uncachedClients[i++ % setup!.uncachedClients.length]!),
      });
      log(
        `    uncached (a different client every request): ${uncached.rps}/s, p50 ${uncached.p50} ms, p99 ${uncached.p99} ms, ${uncached.errors} errors${cpuNote(uncached)}`,
      );
      // The check itself, in this process: Almoner's ClientSecretCache with a remembered
      // success, against argon2.verify on one core (the uncached path's cost).
      const cache = new ClientSecretCache(crypto.randomBytes(32));
      const secret = generateClientSecret();
      const hash = await hashClientSecret(secret, params);
      if (!(await cache.verify('test_benchclient', hash, secret, '127.0.0.1'))) throw new Error('the cache refused a correct secret');
      const checks: number[] = [];
      const checkStart = performance.now();
      while (performance.now() - checkStart < 2_000) {
        const t0 = performance.now();
        for (let j = 0; j < 1000; j += 1)
          if (!(await cache.verify('test_benchclient', hash, secret, '127.0.0.1'))) throw new Error('cached check failed');
        checks.push((performance.now() - t0) / 1000);
      }
      const checkSeconds = (performance.now() - checkStart) / 1000;
      const cachedCheck: Measurement = {
        rps: round((checks.length * 1000) / checkSeconds, 0),
        p50: round(median(checks), 5),
        p99: round(Math.max(...checks), 5),
        errors: 0,
        completed: checks.length * 1000,
        seconds: round(checkSeconds, 2),
        concurrency: 1,
      };
      const argonOne: Measurement = {
        rps: round(one.rate, 1),
        p50: round(one.p50, 2),
        p99: round(one.p99, 2),
        errors: 0,
        completed: one.completed,
        seconds: round(one.seconds, 2),
        concurrency: 1,
      };
      log(
        `    the check itself (ClientSecretCache.verify, remembered success, in-process): ${Math.round(cachedCheck.rps).toLocaleString('en-US')}/s`,
      );
      const checkRatio = ratio(cachedCheck, argonOne);
      scenarios.push({
        id: 'client_auth_check',
        title: 'client authentication check itself, cached (ClientSecretCache.verify)',
        almoner: cachedCheck,
        baseline: argonOne,
        baselineLabel: `argon2.verify/s on one core at the configured parameters (the uncached check)`,
        ratio: checkRatio,
        target: 'cached path > 100× uncached',
        checks: [{ label: '> 100×', met: (checkRatio ?? 0) > 100 }],
        detail: `measured in the harness process (the same class the server uses): batches of 1,000 sequential checks of a remembered secret for 2 s (p50 / p99 columns: ms per check, the median and the slowest batch average); the uncached check is argon2.verify itself, run in its own process on one core.`,
      });
      const r = ratio(cached, uncached);
      scenarios.push({
        id: 'client_auth_cached',
        title: 'client authentication, cached (introspection, one client)',
        almoner: cached,
        baseline: uncached,
        baselineLabel: `the same request uncached: a different client each time (${setup.uncachedClients.length} clients, 4 connections)`,
        ratio: r,
        // Not a verdict (bounded by the request's other work; docs/benchmarks.md): reported only.
        target: 'information (the check itself is the target, above)',
        checks: [],
        detail: `the uncached column is the same request with a client whose secret was never checked, so argon2id runs (and the client is read from the database) every time; argon2.verify alone on one core did ${one.rate.toFixed(1)}/s in this run at the configured parameters and ${defaults.rate.toFixed(1)}/s at the library's defaults; cached vs that one-core rate: ${(cached.rps / one.rate).toFixed(0)}×.`,
      });
    }

    // ------------------------------------------------------------- the organizations directory
    // The demo generator's IRS EO BMF file (src/demo/bmf-file.ts), imported with the operator's
    // command in a child process on the server's node; then VACUUM ANALYZE (not timed), as an
    // operator would after a bulk load, so no autovacuum runs under the later scenarios.
    let grantmaker: Grantmaker | undefined;
    const theGrantmaker = async () => (grantmaker ??= await addGrantmaker(setup!.db, urls.sandboxApi, BENCH_GRANTMAKER_EIN));
    const directoryWanted = ONLY.has('directory_import') || ONLY.has('directory_search');
    if (directoryWanted) {
      log(
        `\nscenario: organizations directory import (${DIRECTORY_ROWS.toLocaleString('en-US')} rows, npm run admin -- organizations import)`,
      );
      const file = path.join(dataDir, 'eo-demo.csv');
      const t0 = performance.now();
      await writeDemoBmfFile(file, { rows: DIRECTORY_ROWS, firstEin: DIRECTORY_FIRST_EIN });
      const generateSeconds = (performance.now() - t0) / 1000;
      const fileMb = fs.statSync(file).size / 1048576;
      log(`    demo file: ${DIRECTORY_ROWS} rows, ${fileMb.toFixed(0)} MB, written in ${generateSeconds.toFixed(1)} s`);
      await setup.settleStatistics();
      const t1 = performance.now();
      const importer = track(new NodeProcess('src/cli/main.ts', serverEnv, [], ['organizations', 'import', file, '--json']));
      const peak = new RssSampler(importer.pid);
      await importer.exited;
      const importSeconds = (performance.now() - t1) / 1000;
      const importRss = peak.stop();
      if (importer.exit?.code !== 0) throw new Error(`organizations import failed (${JSON.stringify(importer.exit)}):\n${importer.output}`);
      const counts = JSON.parse(
        importer.output
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .pop()!,
      ) as { inserted: number; read: number };
      fs.rmSync(file, { force: true });
      const t2 = performance.now();
      await sql`vacuum analyze directory_organizations`.execute(setup.db);
      const vacuumSeconds = (performance.now() - t2) / 1000;
      const sizes = await directorySizes(setup.db);
      log(
        `    imported ${counts.read} rows (${counts.inserted} inserted) in ${importSeconds.toFixed(1)} s (${Math.round(counts.read / importSeconds)} rows/s, peak RSS ${importRss} MB); VACUUM ANALYZE ${vacuumSeconds.toFixed(1)} s; table ${mb(sizes.table_bytes)}, words index ${mb(sizes.words_index_bytes)}, ${sizes.dictionary_words} distinct words, all ${mb(sizes.total_bytes)}`,
      );
      directoryFacts = { rows: sizes.rows, importSeconds, vacuumSeconds, generateSeconds, fileMb, sizes };
      if (ONLY.has('directory_import'))
        scenarios.push({
          id: 'directory_import',
          title: `organizations directory import, ${DIRECTORY_ROWS.toLocaleString('en-US')} rows (rows/s; the time in the verdict)`,
          almoner: {
            rps: round(counts.read / importSeconds, 0),
            p50: NaN,
            p99: NaN,
            errors: counts.read === DIRECTORY_ROWS ? 0 : 1,
            completed: counts.read,
            seconds: round(importSeconds, 1),
            concurrency: 1,
          },
          baselineLabel: '—',
          target: '≤ 3 min for 1,000,000 rows',
          checks: [
            {
              label: `${(importSeconds / 60).toFixed(2)} min (${importSeconds.toFixed(0)} s) ≤ 3 min; table ${mb(sizes.table_bytes)}, words index ${mb(sizes.words_index_bytes)} (pg_relation_size), all ${mb(sizes.total_bytes)}`,
              met: importSeconds <= 180 && counts.read === DIRECTORY_ROWS,
            },
          ],
          detail: `\`npm run admin -- organizations import <file> --json\` in a child process (${serverRuntimeLabel()}; the time includes its start), over a file of ${DIRECTORY_ROWS.toLocaleString('en-US')} organizations (${fileMb.toFixed(0)} MB) from the demo generator (\`npm run admin -- demo bmf\`, ${generateSeconds.toFixed(1)} s, not counted) into an empty directory: one transaction, batches of 1,000 rows, the prefix index on search_name and the GIN index on search_words kept up as it goes, the distinct words counted once at the end. The importer's peak RSS was ${importRss} MB (not the server's: outside the peak RSS row). Sizes after \`VACUUM ANALYZE\` (${vacuumSeconds.toFixed(1)} s, not counted): the table (pg_table_size, heap and TOAST) ${mb(sizes.table_bytes)}, the words index (pg_relation_size of directory_organizations_search_words_idx) ${mb(sizes.words_index_bytes)}, ${sizes.dictionary_words} distinct words in directory_words, table and all its indexes (pg_total_relation_size) ${mb(sizes.total_bytes)}.`,
          latency: false,
        });
    }

    if (ONLY.has('directory_search')) {
      log(`\nscenario: directory search, ${DIRECTORY_CONNECTIONS} connections (typeahead names, then EIN lookups)`);
      const g = await theGrantmaker();
      const hits = await resultCounts(urls.sandboxApi, g.key, TYPEAHEAD_QUERIES);
      log(
        `    results per query (of at most 20): ${Object.entries(hits)
          .map(([q, n]) => `"${q}" ${n}`)
          .join(', ')}`,
      );
      await setup.settleStatistics();
      const names = await repeating('Almoner, typeahead names', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        connections: DIRECTORY_CONNECTIONS,
        next: searchRequests(g.key, TYPEAHEAD_QUERIES),
      });
      const eins = einQueries(DIRECTORY_FIRST_EIN, directoryFacts?.rows ?? DIRECTORY_ROWS, 5000);
      const einHits = await resultCounts(urls.sandboxApi, g.key, eins.slice(0, 5));
      const lookups = await repeating('Almoner, EIN lookups', {
        origin: urls.sandboxApi,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        connections: DIRECTORY_CONNECTIONS,
        next: searchRequests(g.key, eins),
      });
      const over = `over ${(directoryFacts?.rows ?? 0).toLocaleString('en-US')} organizations of the demo file`;
      scenarios.push(
        {
          id: 'directory_search_names',
          title: `directory search, typeahead names (${DIRECTORY_CONNECTIONS} connections)`,
          almoner: names,
          baselineLabel: '—',
          target: 'p99 ≤ 50 ms',
          checks: [
            {
              label: `p99 ${names.p99} ms ≤ 50 ms${names.errors ? ` (${names.errors} errors)` : ''}`,
              met: names.p99 <= 50 && names.errors === 0,
            },
          ],
          detail: `GET /v1/organizations/search?q=… with a grantmaker's API key, ${over}, cycling over ${TYPEAHEAD_QUERIES.length} queries as typed (prefixes, whole words, a misspelt letter or a transposed pair); results per query (at most 20): ${Object.entries(
            hits,
          )
            .map(([q, n]) => `"${q}" ${n}`)
            .join(', ')}.`,
        },
        {
          id: 'directory_search_ein',
          title: `directory search, EIN lookup (${DIRECTORY_CONNECTIONS} connections)`,
          almoner: lookups,
          baselineLabel: '—',
          target: 'p99 ≤ 10 ms',
          checks: [
            {
              label: `p99 ${lookups.p99} ms ≤ 10 ms${lookups.errors ? ` (${lookups.errors} errors)` : ''}`,
              met: lookups.p99 <= 10 && lookups.errors === 0,
            },
          ],
          detail: `GET /v1/organizations/search?q=12-3456789 with a grantmaker's API key, ${over}, cycling over 5,000 of its EINs (results for the first five: ${Object.values(einHits).join(', ')}).`,
        },
      );
    }

    // ------------------------------------------------------------- disbursements
    // Recipients from the directory (a small demo file when the directory scenarios did not run).
    let recipientIds: string[] | undefined;
    const recipients = async () => (recipientIds ??= await directoryRecipients());
    const directoryRecipients = async () => {
      if (!directoryWanted) {
        const file = path.join(dataDir, 'eo-recipients.csv');
        await writeDemoBmfFile(file, { rows: 1000, firstEin: DIRECTORY_FIRST_EIN });
        await importBmfFile(setup!.db, file);
      }
      return (await setup!.db.selectFrom('directory_organizations').select('id').orderBy('ein').limit(100).execute()).map((r) => r.id);
    };
    if (ONLY.has('disbursements')) {
      log(`\nscenario: disbursement create + approve, ${DISBURSEMENT_CONNECTIONS} connections, one grantmaker (API key)`);
      const g = await theGrantmaker();
      const to = await recipients();
      await fund(urls.sandboxApi, g, DISBURSEMENT_FUNDING);
      const bare = track(
        new NodeProcess(
          'bench/baseline/disbursements-endpoint.ts',
          cleanEnv({ PORT: '0', DATABASE_URL: databaseUrl.toString(), ORG_ID: g.organizationId, ACCOUNT_ID: g.accountId, ENVIRONMENT }),
        ),
      );
      const { port } = await bare.waitForJsonLine<{ port: number }>('ready');
      const bareOrigin = `http://127.0.0.1:${port}`;
      let baseline: Measurement;
      try {
        await setup.settleStatistics();
        baseline = await warmedWorkers({
          connections: DISBURSEMENT_CONNECTIONS,
          seconds: SECONDS,
          warmSeconds: WARM_SECONDS,
          pid: bare.pid,
          postgresPids: baselineBackends,
          postgresTransactions: transactionsVia(() => fetch(`${bareOrigin}/poke`).then((r) => r.text())),
          task: createAndApprove(bareOrigin, undefined, to),
        });
        log(`    Koa + pg, no authentication: ${measured(baseline)}`);
      } finally {
        await bare.stop();
      }
      await setup.settleStatistics();
      const almoner = await warmedWorkers({
        connections: DISBURSEMENT_CONNECTIONS,
        seconds: SECONDS,
        warmSeconds: WARM_SECONDS,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        task: createAndApprove(urls.sandboxApi, g.key, to),
      });
      log(`    Almoner: ${measured(almoner)}`);
      const verified = await ledgerClean(setup.db);
      log(`    ledger verify after the run: ${verified.ok ? 'clean' : `NOT CLEAN: ${verified.text}`}`);
      const r = ratio(almoner, baseline);
      scenarios.push({
        id: 'disbursements',
        title: `disbursement create + approve, pairs/s (${DISBURSEMENT_CONNECTIONS} connections, one grantmaker)`,
        almoner,
        baseline,
        baselineLabel: 'Koa + pg endpoint writing the same rows and ledger entries, one transaction each, no authentication',
        ratio: r,
        target: '≥ 0.5× baseline; 0 errors; ledger verify clean',
        checks: [
          { label: '≥ 0.5×', met: (r ?? 0) >= 0.5 },
          { label: `${almoner.errors + baseline.errors} errors`, met: almoner.errors === 0 && baseline.errors === 0 },
          { label: `ledger verify ${verified.ok ? 'clean' : 'not clean'}`, met: verified.ok },
        ],
        detail: `${DISBURSEMENT_CONNECTIONS} workers in the harness, each a loop of POST /v1/disbursements (${DISBURSEMENT_CENTS} cents, one transaction, to one of 100 directory organizations) then POST /v1/disbursements/{id}/approve, with one grantmaker's sandbox API key; latency and CPU columns are per pair. The account was funded with ${(DISBURSEMENT_FUNDING / 100).toLocaleString('en-US')} dollars through an inbound transfer and its simulation, so every approval is submitted (its hold placed under the account's lock: all approvals of the run take that one lock in turn). The baseline (bench/baseline/disbursements-endpoint.ts, its own process, a pool of 10) writes the same rows on the same account: the disbursement, its transaction and the created event in one transaction; the account's and the disbursement's row locks, the balance read, the hold's ledger transfer and two entries, the status and the updated event in another. verifyLedger (\`admin ledger verify\`) over the whole database after both runs: ${verified.ok ? 'clean' : verified.text}.`,
      });
    }

    if (ONLY.has('disbursement_contention')) {
      log(
        `\nscenario: contention, ${CONTENTION_TOTAL} approvals at once against a balance covering ${CONTENTION_COVERED}, ${CONTENTION_ROUNDS} rounds`,
      );
      const to = await recipients();
      const rounds: ContentionRound[] = [];
      let seconds = 0;
      for (let i = 0; i < CONTENTION_ROUNDS; i += 1) {
        const t0 = performance.now();
        const round_ = await contentionRound(
          setup.db,
          urls.sandboxApi,
          `98-10000${String(i).padStart(2, '0')}`,
          to,
          CONTENTION_TOTAL,
          CONTENTION_COVERED,
        );
        seconds += (performance.now() - t0) / 1000;
        rounds.push(round_);
        log(
          `    round ${i + 1}: ${JSON.stringify(round_.statuses)}, available ${round_.available}, slowest approval ${Math.max(...round_.ms).toFixed(1)} ms`,
        );
      }
      const approvals = contentionMeasurement(rounds, seconds, CONTENTION_TOTAL);
      const exact = rounds.every(
        (r) =>
          r.statuses.submitted === CONTENTION_COVERED &&
          r.statuses.awaiting_balance === CONTENTION_TOTAL - CONTENTION_COVERED &&
          r.available === 0,
      );
      const verified = await ledgerClean(setup.db);
      scenarios.push({
        id: 'disbursement_contention',
        title: `disbursement approvals under contention: ${CONTENTION_TOTAL} at once, the balance covering ${CONTENTION_COVERED} (approvals/s over the rounds)`,
        almoner: approvals,
        baselineLabel: '—',
        target: `exactly ${CONTENTION_COVERED} submitted, the rest awaiting_balance, every round; 0 errors; p99 reported (information)`,
        checks: [
          {
            label: `${rounds.filter((r) => r.statuses.submitted === CONTENTION_COVERED && r.statuses.awaiting_balance === CONTENTION_TOTAL - CONTENTION_COVERED).length} of ${CONTENTION_ROUNDS} rounds exactly ${CONTENTION_COVERED} submitted and ${CONTENTION_TOTAL - CONTENTION_COVERED} awaiting_balance`,
            met: exact,
          },
          {
            label: `${approvals.errors} errors; ledger verify ${verified.ok ? 'clean' : 'not clean'}`,
            met: approvals.errors === 0 && verified.ok,
          },
        ],
        detail: `${CONTENTION_ROUNDS} rounds, each with a grantmaker of its own: its account funded with ${CONTENTION_COVERED} × ${DISBURSEMENT_CENTS} cents, ${CONTENTION_TOTAL} disbursements of ${DISBURSEMENT_CENTS} cents created one by one, then all ${CONTENTION_TOTAL} approvals sent at once (${CONTENTION_TOTAL} connections); each approval timed from its request to its answer (p50 / p99 over all ${approvals.completed} approvals; the server's pool has 10 connections and the account's lock lets one decide at a time). Rounds: ${rounds.map((r) => `${JSON.stringify(r.statuses)} available ${r.available}`).join('; ')}.`,
      });
    }

    // ------------------------------------------------------------- grant capture
    if (ONLY.has('grant_capture')) {
      log(`\nscenario: grant capture, ${CAPTURE_CONNECTIONS} connections, one platform (API key)`);
      const [recipient] = await recipients();
      const platform = await addPlatform(setup.db, urls.sandboxApi, BENCH_PLATFORM_EIN, recipient!);
      const bare = track(
        new NodeProcess(
          'bench/baseline/grants-endpoint.ts',
          cleanEnv({ PORT: '0', DATABASE_URL: databaseUrl.toString(), ORG_ID: platform.organizationId, ENVIRONMENT }),
        ),
      );
      const { port } = await bare.waitForJsonLine<{ port: number }>('ready');
      const bareOrigin = `http://127.0.0.1:${port}`;
      let baseline: Measurement;
      try {
        const sessions = await authorizedSessions(setup.db, platform.connectId, CAPTURE_SESSIONS);
        await setup.settleStatistics();
        baseline = await warmedWorkers({
          connections: CAPTURE_CONNECTIONS,
          seconds: SECONDS,
          warmSeconds: WARM_SECONDS,
          pid: bare.pid,
          postgresPids: baselineBackends,
          postgresTransactions: transactionsVia(() => fetch(`${bareOrigin}/poke`).then((r) => r.text())),
          task: captureNext(bareOrigin, undefined, sessions),
        });
        log(`    Koa + pg, no authentication: ${measured(baseline)}`);
      } finally {
        await bare.stop();
      }
      const sessions = await authorizedSessions(setup.db, platform.connectId, CAPTURE_SESSIONS);
      await setup.settleStatistics();
      const almoner = await warmedWorkers({
        connections: CAPTURE_CONNECTIONS,
        seconds: SECONDS,
        warmSeconds: WARM_SECONDS,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        task: captureNext(urls.sandboxApi, platform.key, sessions),
      });
      log(`    Almoner: ${measured(almoner)}`);
      const r = ratio(almoner, baseline);
      scenarios.push({
        id: 'grant_capture',
        title: `grant capture, grants/s (${CAPTURE_CONNECTIONS} connections, one platform)`,
        almoner,
        baseline,
        baselineLabel: 'Koa + pg endpoint writing the same rows, one transaction each, no authentication',
        ratio: r,
        target: '≥ 0.5× baseline; 0 errors',
        checks: [
          { label: '≥ 0.5×', met: (r ?? 0) >= 0.5 },
          { label: `${almoner.errors + baseline.errors} errors`, met: almoner.errors === 0 && baseline.errors === 0 },
        ],
        detail: `${CAPTURE_CONNECTIONS} workers in the harness, each a loop of POST /v1/grants (${GRANT_CENTS} cents) capturing the next of ${CAPTURE_SESSIONS} workflow sessions of the sandbox's simulated DAF, authorized beforehand (written to the database as the donor flow writes them), with one platform's sandbox API key and its Connect for a directory nonprofit. Almoner checks the session (its row lock, NOWAIT), the Connect, the DAF's minimum, the authorized amount and the known balance, then writes the grant, its first status, the session's capture and the grant.created event in one transaction. The baseline (bench/baseline/grants-endpoint.ts, its own process, a pool of 10) takes the same lock and reads, and writes the same rows, on sessions of its own.`,
      });
    }

    // ------------------------------------------------------------- gift processing (docs/benchmarks.md, "Gift processing")
    if (ONLY.has('gift_lists')) {
      log(
        `\nscenario: GET /v1/mail_items and GET /v1/deposits (${GIFT_RECORDS.toLocaleString('en-US')} of each), ${GATEWAY_CONNECTIONS} connections`,
      );
      await seedGiftRecords(setup.db, setup.orgId, BENCH_GIFT_LIST_EIN, GIFT_RECORDS);
      await sql`analyze mail_items, mail_item_scans, deposits, property_assignments`.execute(setup.db);
      const lists = [
        { id: 'gift_lists_mail_items', path: '/v1/mail_items', pages: await giftPageTokens(setup.db, 'mail_items', setup.orgId, 2000) },
        { id: 'gift_lists_deposits', path: '/v1/deposits', pages: await giftPageTokens(setup.db, 'deposits', setup.orgId, 2000) },
      ];
      const bare = track(
        new NodeProcess(
          'bench/baseline/gift-endpoint.ts',
          cleanEnv({ PORT: '0', DATABASE_URL: databaseUrl.toString(), ORG_ID: setup.orgId, ENVIRONMENT }),
        ),
      );
      const bareOrigin = `http://127.0.0.1:${(await bare.waitForJsonLine<{ port: number }>('ready')).port}`;
      const baselines: Measurement[] = [];
      // One page of each list from both servers, compared after (the same JSON: docs/benchmarks.md, "Gift processing").
      const samplePath = (list: (typeof lists)[number]) => `${list.path}?page_token=${list.pages[0]!}`;
      let bareSamples: string[] = [];
      try {
        bareSamples = await Promise.all(lists.map((list) => fetch(`${bareOrigin}${samplePath(list)}`).then((r) => r.text())));
        const bareTransactions = transactionsVia(() => fetch(`${bareOrigin}/poke`).then((r) => r.text()));
        for (const list of lists) {
          await setup.settleStatistics();
          baselines.push(
            await repeating(`Koa + pg, no authentication, ${list.path}`, {
              origin: bareOrigin,
              pid: bare.pid,
              postgresPids: baselineBackends,
              postgresTransactions: bareTransactions,
              connections: GATEWAY_CONNECTIONS,
              next: giftListRequests(list.path, list.pages),
            }),
          );
        }
      } finally {
        await bare.stop();
      }
      const accessTokens = await accessTokensOf(urls.sandboxApi);
      const almonerSamples = await Promise.all(
        lists.map((list) =>
          fetch(`${urls.sandboxApi}${samplePath(list)}`, { headers: { authorization: `Bearer ${accessTokens[0]!}` } }).then((r) =>
            r.text(),
          ),
        ),
      );
      for (const [i, list] of lists.entries()) {
        const same = sameJson(almonerSamples[i]!, bareSamples[i]!);
        const almoner = await repeating(`Almoner, ${list.path}`, {
          origin: urls.sandboxApi,
          pid,
          postgresPids: serverBackends,
          postgresTransactions: transactions,
          connections: GATEWAY_CONNECTIONS,
          next: giftListRequests(list.path, list.pages, accessTokens),
        });
        const baseline = baselines[i]!;
        const r = ratio(almoner, baseline);
        scenarios.push({
          id: list.id,
          title: `authenticated GET ${list.path} (${GATEWAY_CONNECTIONS} connections)`,
          almoner,
          baseline,
          baselineLabel: 'Koa + pg endpoint, same queries and JSON, no authentication',
          ratio: r,
          target: '≥ 0.9× baseline; 0 errors',
          checks: [
            { label: '≥ 0.9×', met: (r ?? 0) >= 0.9 },
            { label: `${almoner.errors + baseline.errors} errors`, met: almoner.errors === 0 && baseline.errors === 0 },
            { label: same ? 'the same JSON as the baseline (a page of 100 compared)' : 'a page differs from the baseline', met: same },
          ],
          detail: `pages of 100 (the default limit) starting at 2,000 random page tokens over the nonprofit's ${GIFT_RECORDS.toLocaleString('en-US')} ${list.path === '/v1/mail_items' ? 'mail items (each with one scan; the page then its scans, two queries)' : 'check deposits (the page then its property values, two queries)'}, and now and then the first page; ${GATEWAY_CONNECTIONS} access tokens from the token endpoint, rotated over the requests (the donations scenario's authentication); both servers use a pool of 10 connections; the baseline is bench/baseline/gift-endpoint.ts.`,
        });
      }
    }
    if (ONLY.has('gift_ingest') || ONLY.has('gift_upload'))
      giftProvider ??= await benchProvider(setup.db, setup.orgId, BENCH_GIFT_PROVIDER_EIN);
    if (ONLY.has('gift_ingest')) {
      log(`\nscenario: ingest of a ${GIFT_ENVELOPES}-envelope batch with scans, in a process of its own`);
      const batch = await buildScanBatch(GIFT_ENVELOPES);
      const meanKb = round(batch.imageBytes / batch.images / 1024, 0);
      log(`    the batch: ${batch.images} TIFFs (mean ${meanKb} KB), ZIP ${round(batch.zip.length / 1048576, 1)} MB`);
      const ingest = await ingestInChild(setup.db, {
        databaseUrl: databaseUrl.toString(),
        lockbox: giftProvider!.lockbox,
        providerId: giftProvider!.providerId,
        zip: batch.zip,
      });
      const ledger = await ledgerClean(setup.db);
      const c = ingest.counts;
      log(
        `    ${ingest.outcome} in ${(ingest.ms / 1000).toFixed(2)} s (${ingest.passes} passes); RSS ${ingest.rssBeforeMb} MB before, peak ${ingest.peakMb} MB (high-water mark ${ingest.highWaterMb ?? '—'} MB, sampled every 20 ms ${ingest.peakRssMb} MB); ${c.mailItems} mail items, ${c.donations} donations, ${c.deposits} deposits, ${c.scans} scans, ${c.storedImages} images stored; ledger ${ledger.ok ? 'clean' : ledger.text}`,
      );
      const counted = c.mailItems === GIFT_ENVELOPES && c.donations === GIFT_ENVELOPES && c.deposits === GIFT_ENVELOPES;
      scenarios.push({
        id: 'gift_ingest',
        title: `mail batch ingest, ${GIFT_ENVELOPES} envelopes with ${batch.images} scans (envelopes/s; time and RSS in the verdict)`,
        almoner: {
          rps: round(GIFT_ENVELOPES / (ingest.ms / 1000), 1),
          p50: NaN,
          p99: NaN,
          errors: counted && ledger.ok ? 0 : 1,
          completed: c.mailItems,
          seconds: round(ingest.ms / 1000, 2),
          peakRssMb: ingest.peakMb,
          concurrency: 1,
        },
        latency: false,
        baselineLabel: '—',
        target: 'information: time and peak RSS; every envelope ingested, ledger clean',
        checks: [
          {
            label: `${(ingest.ms / 1000).toFixed(2)} s, the ingesting process's RSS ${ingest.rssBeforeMb} → peak ${ingest.peakMb} MB`,
            met: ingest.outcome === 'ingested',
          },
          { label: `${c.mailItems} mail items, ${c.donations} donations, ${c.deposits} deposits`, met: counted },
          { label: ledger.ok ? 'ledger verified clean' : `ledger: ${ledger.text}`, met: ledger.ok },
        ],
        detail: `one ZIP (${round(batch.zip.length / 1048576, 1)} MB) of ${GIFT_ENVELOPES} envelopes, each one check line with a front and a back TIFF (grey 1,000 × 450, JPEG-compressed, mean ${meanKb} KB; ${batch.images} entries over 50 distinct pictures), built with test/helpers/mail-batch.ts before the clock; its row awaiting its upload and its ZIP in a folder storage of the ingesting process's own. bench/lib/ingest-child.ts (its own process, tsx, a pool of 10) runs MailBatchIngestor.runOnce() until the batch is ingested: from the first pass (which notices the upload) to the batch's end, its RSS before, and its peak: the larger of the kernel's high-water mark (VmHWM, reset when the clock starts: ${ingest.highWaterMb ?? '—'} MB) and its RSS sampled every 20 ms (${ingest.peakRssMb} MB). ${c.scans} scans and ${c.storedImages} images stored; admin ledger verify's check after.`,
      });
    }
    if (ONLY.has('gift_upload')) {
      log(`\nscenario: a ${GIFT_UPLOAD_MB} MB upload through the folder storage's upload route`);
      const up = await uploadBatch(setup.db, {
        origin: urls.sandboxApi,
        pid,
        apiKey: giftProvider!.apiKey,
        locationId: giftProvider!.lockbox.locationId,
        bytes: GIFT_UPLOAD_MB * 1048576,
        log,
      });
      const rise = round(up.peakRssMb - up.rssBeforeMb, 1);
      log(
        `    ${up.status} in ${up.seconds.toFixed(2)} s (${up.mbPerSecond.toFixed(0)} MB/s); server RSS ${up.rssBeforeMb} MB before, peak ${up.peakRssMb} MB (+${rise} MB)`,
      );
      scenarios.push({
        id: 'gift_upload',
        title: `mail batch upload, ${GIFT_UPLOAD_MB} MB through the upload route (MB/s)`,
        almoner: {
          rps: round(up.mbPerSecond, 1),
          p50: NaN,
          p99: NaN,
          errors: up.status === 200 ? 0 : 1,
          completed: 1,
          seconds: round(up.seconds, 2),
          peakRssMb: up.peakRssMb,
          concurrency: 1,
        },
        latency: false,
        baselineLabel: '—',
        target: "the server's RSS rise ≤ 50 MB; throughput reported",
        checks: [
          { label: `answered ${up.status}`, met: up.status === 200 },
          { label: `RSS ${up.rssBeforeMb} → ${up.peakRssMb} MB (+${rise} MB) ≤ +50 MB`, met: rise <= 50 },
        ],
        detail: `an upload URL from POST /v1/mailbox/upload_url (the bench lockbox provider's sandbox API key), then one PUT of ${GIFT_UPLOAD_MB} MiB with its Content-Length, generated on the fly (1 MiB of random bytes again and again; not a ZIP, which the route does not read), streamed into the server's folder storage; the server's RSS read before and sampled every 20 ms until the answer. Afterwards the server's own ingestor refused the batch: ${up.afterwards}.`,
      });
    }

    // ------------------------------------------------------------- donor flow pages
    if (ONLY.has('donor_flow')) {
      log(`\nscenario: the donor flow's pages, ${DONOR_FLOW_DONORS} donors at once (simulated DAF)`);
      const [recipient] = await recipients();
      const platform = await addPlatform(setup.db, urls.sandboxApi, BENCH_FLOW_PLATFORM_EIN, recipient!);
      const connects = await benchConnects(setup.db, platform, DONOR_FLOW_CONNECTS);
      const simulated = await setup.db.selectFrom('dafs').select('id').where('simulated', '=', true).executeTakeFirstOrThrow();
      const walk = donorWalks(urls.sandboxDashboard, connects, simulated.id);
      await runWorkers({ concurrency: DONOR_FLOW_DONORS, seconds: WARM_SECONDS, task: walk });
      await setup.settleStatistics();
      const almoner = await runWorkers({
        concurrency: DONOR_FLOW_DONORS,
        seconds: SECONDS,
        pid,
        postgresPids: serverBackends,
        postgresTransactions: transactions,
        task: walk,
      });
      log(`    Almoner: ${measured(almoner)}`);
      scenarios.push({
        id: 'donor_flow',
        title: `donor flow pages, pages/s (${DONOR_FLOW_DONORS} donors at once)`,
        almoner,
        baselineLabel: '—',
        target: `p99 per page reported (information); 0 errors`,
        checks: [{ label: `${almoner.errors} errors`, met: almoner.errors === 0 }],
        detail: `${DONOR_FLOW_DONORS} donors at once in the harness (the test suite's FormBrowser: cookies, redirects, forms), each a fresh browser at an address of its own (X-Forwarded-For from the trusted loopback proxy) on the next of ${connects.length} Connects (one for each directory nonprofit), walking the simulated DAF's five pages: the start (the DAF list), the DAF chosen (→ the amount page), the amount (→ the simulated sign-in), the sign-in (→ the confirmation), Authorize (→ the final page; a workflow session written under both attempt limits). A form's POST and the page its redirect shows are one page; latency columns are per page.`,
      });
    }

    // ------------------------------------------------------------- workers=1 side of the workers scenario
    // The workers scenario sets ALMONER_WORKERS=2 beside this run's refresh and donations rows
    // (one process); a scenario left out of BENCH_ONLY is measured here for it alone.
    let workersOne: { refresh: Measurement; donations: Measurement; fromRows: { refresh: boolean; donations: boolean } } | undefined;
    if (ONLY.has('workers')) {
      let refreshOne = scenarios.find((s) => s.id === 'refresh')?.almoner;
      let donationsOne = scenarios.find((s) => s.id === 'donations')?.almoner;
      const fromRows = { refresh: refreshOne !== undefined, donations: donationsOne !== undefined };
      if (!fromRows.refresh || !fromRows.donations)
        log('\nscenario: workers, the ALMONER_WORKERS=1 side (refresh or donations is not in BENCH_ONLY)');
      refreshOne ??= await almonerRefresh('Almoner, 1 process', urls.sandboxApi, pid, false, transactions);
      if (!donationsOne) {
        if (donationPages.length === 0) donationPages = await setup.pageTokens(2000);
        donationsOne = await repeating('Almoner, 1 process', {
          origin: urls.sandboxApi,
          pid,
          postgresPids: serverBackends,
          postgresTransactions: transactions,
          connections: GATEWAY_CONNECTIONS,
          next: await donationsRequests(urls.sandboxApi),
        });
      }
      workersOne = { refresh: refreshOne, donations: donationsOne, fromRows };
    }

    // ------------------------------------------------------------- RSS and shutdown
    // The one server process's peak (the workers scenario's process tree has its own rows, below;
    // gift_ingest's peak is its ingesting process's, not the server's).
    const peakRssMb = Math.max(0, ...scenarios.filter((s) => s.id !== 'gift_ingest').map((s) => s.almoner.peakRssMb ?? 0));
    const singleTree = processTree(pid).length;
    await server.stop();
    if (process.env.BENCH_DEBUG) log(`server output (tail):\n${server.output.slice(-4000)}`);

    // ------------------------------------------------------------- ALMONER_WORKERS=2 beside 1
    // A second server on the same database, started after the first one stopped so that the
    // two never compete: a primary that forks 2 node:cluster workers sharing the listeners.
    // The same scenarios, connections and durations; CPU and RSS summed over the primary and
    // its workers.
    if (workersOne) {
      log('\nscenario: ALMONER_WORKERS=2 (a primary and 2 workers sharing the listeners; the server above stopped)');
      const { server: cluster, ms: clusterStartMs } = await startServer({ ...serverEnv, ALMONER_WORKERS: '2' });
      try {
        const tree = processTree(cluster.pid);
        const treeRss = tree.reduce((sum, p) => sum + (rssBytes(p) ?? 0), 0);
        log(
          `    ready in ${(clusterStartMs / 1000).toFixed(2)} s: primary ${cluster.pid}, children ${tree.slice(1).join(', ') || 'none'}; RSS summed ${(treeRss / 1048576).toFixed(0)} MB (the single server was ${singleTree} process${singleTree === 1 ? '' : 'es'})`,
        );
        const clusterTransactions = transactionsVia(() => fetch(`${urls.sandboxApi}/readyz`).then((r) => r.text()));
        const refreshTwo = await almonerRefresh('Almoner, 2 workers', urls.sandboxApi, cluster.pid, true, clusterTransactions);
        if (donationPages.length === 0) donationPages = await setup.pageTokens(2000);
        const donationsTwo = await repeating('Almoner, 2 workers', {
          origin: urls.sandboxApi,
          pid: cluster.pid,
          tree: true,
          postgresPids: serverBackends,
          postgresTransactions: clusterTransactions,
          connections: GATEWAY_CONNECTIONS,
          next: await donationsRequests(urls.sandboxApi),
        });
        const oneLabel = (row: string, fromRow: boolean) =>
          `the same server with ALMONER_WORKERS=1 (one process): ${fromRow ? `the ${row} row above` : 'measured for this row'}, same run`;
        const why = `on this 2-core machine PostgreSQL, the load generator and the workers share the cores, so scaling well below 2× is expected`;
        const how = `a second server with ALMONER_WORKERS=2 on the same database, started after the other scenarios with the first one stopped; each worker with its own pool of database_pool_max connections; CPU per request and peak RSS summed over the primary and its 2 workers (PostgreSQL's backends as in the other rows); the ratio is workers=2 / workers=1`;
        const rss = (two: Measurement, one: Measurement) =>
          `server CPU by process (primary first) ${two.serverCpuMsByProcess?.map((ms) => ms.toFixed(2)).join(' + ') ?? '—'} ms per request; peak RSS ${two.peakRssMb ?? '—'} MB summed over the ${tree.length} processes, against ${one.peakRssMb ?? '—'} MB for the one process`;
        const rTwo = ratio(refreshTwo, workersOne.refresh);
        const dTwo = ratio(donationsTwo, workersOne.donations);
        log(
          `    workers=2 / workers=1: refresh_token ${rTwo ?? '—'}×, GET /v1/donations ${dTwo ?? '—'}×; server CPU ms/request by process (primary first): refresh ${refreshTwo.serverCpuMsByProcess?.join(' + ') ?? '—'}, donations ${donationsTwo.serverCpuMsByProcess?.join(' + ') ?? '—'}`,
        );
        scenarios.push(
          {
            id: 'workers_refresh',
            title: `refresh_token grant, ALMONER_WORKERS=2 (${TOKEN_CONNECTIONS} connections)`,
            almoner: refreshTwo,
            baseline: workersOne.refresh,
            baselineLabel: oneLabel('refresh_token grant', workersOne.fromRows.refresh),
            ratio: rTwo,
            target: 'information (no target)',
            checks: [],
            detail: `${why}. The refresh_token scenario as above (pre-minted tokens, each presented once) against ${how}; ${rss(refreshTwo, workersOne.refresh)}.`,
          },
          {
            id: 'workers_donations',
            title: `authenticated GET /v1/donations, ALMONER_WORKERS=2 (${GATEWAY_CONNECTIONS} connections)`,
            almoner: donationsTwo,
            baseline: workersOne.donations,
            baselineLabel: oneLabel('authenticated GET /v1/donations', workersOne.fromRows.donations),
            ratio: dTwo,
            target: 'information (no target)',
            checks: [],
            detail: `${why}. The donations scenario as above (closed loop; access tokens from the workers' token endpoint) against ${how}; ${rss(donationsTwo, workersOne.donations)}.`,
          },
        );
      } finally {
        await cluster.stop();
        if (process.env.BENCH_DEBUG) log(`ALMONER_WORKERS=2 server output (tail):\n${cluster.output.slice(-4000)}`);
      }
    }

    // ------------------------------------------------------------- start to ready (embedded)
    if (ONLY.has('start')) {
      log('\nserver start to ready, embedded PostgreSQL (no DATABASE_URL)');
      const embeddedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-bench-embedded-'));
      fs.chmodSync(embeddedDir, 0o755);
      const embeddedEnv = cleanEnv({
        ...settings,
        ALMONER_DATA_DIR: embeddedDir,
        ALMONER_CLIENTS_FILE: path.join(embeddedDir, 'clients.json'),
      });
      const ms: number[] = [];
      try {
        for (let i = 0; i < 3; i += 1) {
          const { server: embedded, ms: took } = await startServer(embeddedEnv);
          ms.push(took);
          log(
            `    start ${i + 1}${i === 0 ? ' (first: initdb, migrations, keys)' : ' (cluster stopped, data kept)'}: ${(took / 1000).toFixed(2)} s`,
          );
          await embedded.stop();
        }
      } finally {
        fs.rmSync(embeddedDir, { recursive: true, force: true });
      }
      starts.push({ label: `embedded PostgreSQL, ${SERVER_COMMAND} (first, with initdb; then restarts)`, ms });
    }
    const restarts = starts.flatMap((s) => s.ms.slice(1));
    const firsts = starts.map((s) => s.ms[0]!);
    // The target is the restart (docs/benchmarks.md); the first starts (keys, initdb) are shown as information.
    const startChecks: Check[] = starts.length
      ? [
          {
            label: `restart ≤ 3 s (median ${(median(restarts) / 1000).toFixed(2)} s, worst ${(Math.max(...restarts) / 1000).toFixed(2)} s; first starts, information: ${firsts.map((m) => (m / 1000).toFixed(2)).join(' s, ')} s)`,
            met: Math.max(...restarts) <= 3000,
          },
        ]
      : [];

    const results: BenchResults = {
      date: stamp.toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: Math.round(os.totalmem() / 1024 ** 3),
        node: process.version,
        serverNode: serverRuntime?.node ?? 'unknown',
        postgres: postgresVersion,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: os.loadavg(),
      },
      settings: {
        seconds_per_run: SECONDS,
        warm_up_seconds: WARM_SECONDS,
        warm_up_requests: WARM_REQUESTS,
        token_connections: TOKEN_CONNECTIONS,
        gateway_connections: GATEWAY_CONNECTIONS,
        flow_workers: FLOW_WORKERS,
        donations: DONATIONS,
        server_entry: `node ${[...SERVER_NODE_ARGS, SERVER_ENTRY].join(' ')}`,
        server_node: serverRuntime
          ? { version: serverRuntime.node, v8: serverRuntime.v8, requested: serverRuntime.requested, source: serverRuntime.source }
          : null,
        load_generator_node: process.version,
        directory: directoryFacts
          ? {
              file_mb: round(directoryFacts.fileMb, 1),
              generate_seconds: round(directoryFacts.generateSeconds, 1),
              import_seconds: round(directoryFacts.importSeconds, 1),
              vacuum_analyze_seconds: round(directoryFacts.vacuumSeconds, 1),
              ...directoryFacts.sizes,
            }
          : null,
        disbursements:
          ONLY.has('disbursements') || ONLY.has('disbursement_contention')
            ? {
                connections: DISBURSEMENT_CONNECTIONS,
                cents_each: DISBURSEMENT_CENTS,
                funding_cents: DISBURSEMENT_FUNDING,
                contention: { total: CONTENTION_TOTAL, covered: CONTENTION_COVERED, rounds: CONTENTION_ROUNDS },
              }
            : null,
        tsx_start_ms: tsxStartMs ?? null,
        server: {
          ...settings,
          ALMONER_DATA_DIR: '(temporary)',
          ALMONER_CLIENTS_FILE: '(temporary)',
          DATABASE_URL: `${POSTGRES_URL.replace(/\/[^/]*$/, '')}/almoner_bench_<timestamp>`,
        },
        durable_peer: {
          entry: 'bench/baseline/durable-provider.ts',
          pool_max: 10,
          DATABASE_URL: `${POSTGRES_URL.replace(/\/[^/]*$/, '')}/almoner_bench_peer_<timestamp>`,
        },
        donations_paced_rate: "half of the baseline endpoint's closed-loop requests/s in the same run (scenario.paced.rate)",
        password_params: params,
        workers_scenario: ONLY.has('workers')
          ? { ALMONER_WORKERS: 2, compared_with: 1, cpu_and_rss: 'summed over the primary and its workers' }
          : null,
        cpu_profile: CPU_PROF_DIR ?? null,
      },
      scenarios,
      ...(revisionComparisons.length > 0 ? { revision_comparisons: revisionComparisons } : {}),
      starts,
      startChecks,
      peakRssMb,
      rssCheck: { label: `peak ${peakRssMb} MB ≤ 250 MB`, met: peakRssMb <= 250 },
      argon2,
      ...(benchExplain ? { explain: benchExplain } : {}),
      wallSeconds: (performance.now() - wallStart) / 1000,
    };

    log(`\n${markdownTable(results)}\n`);
    if (benchExplain) log(`EXPLAIN (ANALYZE, BUFFERS) of the page query at a random page token:\n${benchExplain}\n`);
    if (process.env.BENCH_NO_WRITE !== '1') {
      const dir = path.join(ROOT, 'bench', 'results');
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, resultsFileName(results));
      fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
      if (FULL_RUN) {
        writeDoc(path.join(ROOT, 'docs', 'benchmarks.md'), results);
        log(`wrote ${path.relative(ROOT, file)} and docs/benchmarks.md`);
      } else log(`wrote ${path.relative(ROOT, file)} (a BENCH_ONLY run leaves docs/benchmarks.md's table to a run of every scenario)`);
    }
  } finally {
    for (const child of children) await child.stop(5_000).catch(() => undefined);
    await setup?.close().catch(() => undefined);
    for (const name of [dbName, peerDbName])
      await admin
        .query(`drop database if exists ${name} with (force)`)
        .catch((error: Error) => log(`could not drop ${name}: ${error.message}`));
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.off('SIGINT', interrupted);
  }
}

await main();
