import http from 'node:http';
import autocannon from 'autocannon';
import { cpuSeconds, cpuSecondsByThread, processTree, RssSampler, type ThreadClass } from './processes.js';

/** One measured run: what the table shows for a scenario or its baseline. */
export interface Measurement {
  /** Successful requests (or flows, or hashes) per second over the run. */
  rps: number;
  /** Latency percentiles of the successful requests, in milliseconds. */
  p50: number;
  p99: number;
  /** Responses that were not the expected status, plus socket errors and timeouts. */
  errors: number;
  completed: number;
  seconds: number;
  /** Peak resident set size of the measured server during the run, in MB (summed over its process tree when the run had `tree`). */
  peakRssMb?: number;
  /** Connections (autocannon) or concurrent workers. */
  concurrency: number;
  /** The first unexpected answer, to explain errors. */
  firstError?: string;
  /** CPU the measured server (all its threads; with `tree`, all its processes) spent per successful request, in ms. */
  serverCpuMs?: number;
  /** Without `tree`: serverCpuMs split by kind of thread (main, libuv threadpool, V8 background, other), in ms per request. */
  serverCpuMsByThread?: Record<ThreadClass, number>;
  /** With `tree`: serverCpuMs split by process, the root (a cluster primary) first. */
  serverCpuMsByProcess?: number[];
  /** CPU the PostgreSQL backends serving it spent per successful request, in ms. */
  postgresCpuMs?: number;
  /** Transactions committed in the database per successful request (each statement outside a transaction is one). */
  transactions?: number;
}

export interface HttpRequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  /** Origin of the server, e.g. http://127.0.0.1:3001 (its authority becomes the Host header). */
  origin: string;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  /** Stop after exactly this many responses (for requests that consume a token each). */
  amount?: number;
  /** Called for every request; returns what to send. */
  next: () => HttpRequestSpec;
  /** Status that counts as success (default 200). */
  expect?: number;
  /** Server process whose RSS is sampled every 200 ms and whose CPU time is counted. */
  pid?: number;
  /** Count `pid` and all its descendants (a cluster primary and its workers): CPU and RSS summed. */
  tree?: boolean;
  /** The PostgreSQL backends serving it (counted when `pid` is set). */
  postgresPids?: () => Promise<number[]>;
  /** Transactions committed so far in the database it uses (counted when `pid` is set). */
  postgresTransactions?: () => Promise<number>;
}

/**
 * Counts the CPU the server and its PostgreSQL backends spend between start() and stop().
 * With `tree`, the server is its process and every descendant (a cluster primary and its
 * workers): a process that appeared during the run counts whole, one that ended during it is
 * counted up to its last reading at start() only (it is gone at stop()).
 */
export class CpuMeter {
  private transactionsStart = 0;
  private readonly serverStart = new Map<number, number>();
  private readonly postgresStart = new Map<number, number>();
  private threadsStart: Record<ThreadClass, number> | undefined;

  constructor(
    private readonly pid: number | undefined,
    private readonly postgresPids?: () => Promise<number[]>,
    private readonly postgresTransactions?: () => Promise<number>,
    private readonly tree = false,
  ) {}

  private serverPids(): number[] {
    return this.pid === undefined ? [] : this.tree ? processTree(this.pid) : [this.pid];
  }

  async start(): Promise<void> {
    if (this.pid === undefined) return;
    if (this.postgresTransactions) this.transactionsStart = await this.postgresTransactions();
    for (const p of this.serverPids()) this.serverStart.set(p, cpuSeconds(p) ?? 0);
    if (!this.tree) this.threadsStart = cpuSecondsByThread(this.pid);
    for (const p of (await this.postgresPids?.()) ?? []) this.postgresStart.set(p, cpuSeconds(p) ?? 0);
  }

  /** Milliseconds of CPU per unit of work, for the server and for PostgreSQL. */
  async stop(units: number): Promise<Partial<Measurement>> {
    if (this.pid === undefined || units === 0) return {};
    let server = 0;
    const byProcess: number[] = [];
    for (const p of this.serverPids()) {
      const start = this.serverStart.get(p) ?? 0;
      const used = (cpuSeconds(p) ?? start) - start;
      server += used;
      byProcess.push(round((used * 1000) / units, 2));
    }
    const result: Partial<Measurement> = {
      serverCpuMs: round((server * 1000) / units, 2),
      ...(this.tree ? { serverCpuMsByProcess: byProcess } : {}),
    };
    if (this.threadsStart) {
      const now = cpuSecondsByThread(this.pid);
      const start = this.threadsStart;
      const perRequest = (kind: ThreadClass) => round(((now[kind] - start[kind]) * 1000) / units, 3);
      result.serverCpuMsByThread = {
        main: perRequest('main'),
        threadpool: perRequest('threadpool'),
        v8_background: perRequest('v8_background'),
        other: perRequest('other'),
      };
    }
    if (this.postgresPids) {
      let postgres = 0;
      // A backend that appeared during the run counts whole (it started during it).
      for (const p of await this.postgresPids()) postgres += (cpuSeconds(p) ?? 0) - (this.postgresStart.get(p) ?? 0);
      result.postgresCpuMs = round((postgres * 1000) / units, 2);
    }
    if (this.postgresTransactions) result.transactions = round(((await this.postgresTransactions()) - this.transactionsStart) / units, 1);
    return result;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Summarises latencies (ms) collected over `seconds`. */
export function summarise(
  latencies: number[],
  seconds: number,
  errors: number,
  concurrency: number,
  extra: Partial<Measurement> = {},
): Measurement {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    rps: round(latencies.length / seconds, 1),
    p50: round(percentile(sorted, 50), 2),
    p99: round(percentile(sorted, 99), 2),
    errors,
    completed: latencies.length,
    seconds: round(seconds, 2),
    concurrency,
    ...extra,
  };
}

/**
 * Drives a server with autocannon from this process (never the server's). Latencies are taken
 * from autocannon's per-response events (sub-millisecond precision), and statuses counted, so
 * a wrong answer is an error even when it is a 2xx.
 */
export async function runLoad(options: LoadOptions): Promise<Measurement> {
  const expected = options.expect ?? 200;
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  // autocannon's own start and finish are rounded to its one-second sampling tick, which is
  // too coarse for runs that stop after `amount` requests: time them from the first request
  // built to the last response received.
  let first: number | undefined;
  let last = 0;
  const sampler = options.pid ? new RssSampler(options.pid, options.tree) : undefined;
  const cpu = new CpuMeter(options.pid, options.postgresPids, options.postgresTransactions, options.tree);
  await cpu.start();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.origin,
        connections: options.connections,
        pipelining: 1,
        timeout: 30,
        ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 10 }),
        requests: [
          {
            setupRequest: (request) => {
              first ??= performance.now();
              const spec = options.next();
              return {
                ...request,
                method: spec.method,
                path: spec.path,
                headers: { ...spec.headers },
                body: spec.body ?? '',
              } as typeof request;
            },
            onResponse: (status: number, body: string) => {
              if (status !== expected && firstError === undefined) firstError = `${status} ${String(body).slice(0, 300)}`;
            },
          },
        ],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      last = performance.now();
      if (status === expected) latencies.push(responseTime);
      else errors += 1;
    });
  });
  const seconds = first !== undefined && last > first ? (last - first) / 1000 : (result.finish.getTime() - result.start.getTime()) / 1000;
  const peakRssMb = sampler?.stop();
  const cpuUse = await cpu.stop(latencies.length);
  return summarise(latencies, seconds, errors + result.errors, options.connections, {
    ...(peakRssMb !== undefined ? { peakRssMb } : {}),
    ...cpuUse,
    ...(firstError !== undefined
      ? { firstError }
      : result.errors > 0
        ? { firstError: `${result.errors} socket errors, ${result.timeouts} timeouts` }
        : {}),
  });
}

/** Runs `task` with `concurrency` workers for `seconds`, measuring each task's duration. */
export async function runWorkers(options: {
  concurrency: number;
  seconds: number;
  pid?: number;
  postgresPids?: () => Promise<number[]>;
  postgresTransactions?: () => Promise<number>;
  task: (worker: number) => Promise<void>;
}): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const sampler = options.pid ? new RssSampler(options.pid) : undefined;
  const cpu = new CpuMeter(options.pid, options.postgresPids, options.postgresTransactions);
  await cpu.start();
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await options.task(worker);
          latencies.push(performance.now() - t0);
        } catch (error) {
          errors += 1;
          firstError ??= (error as Error).message.slice(0, 300);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const peakRssMb = sampler?.stop();
  const cpuUse = await cpu.stop(latencies.length);
  return summarise(latencies, seconds, errors, options.concurrency, {
    ...(peakRssMb !== undefined ? { peakRssMb } : {}),
    ...cpuUse,
    ...(firstError ? { firstError } : {}),
  });
}

/**
 * Open-loop load: requests leave at a steady `rate` per second, whatever the answers do,
 * over a keep-alive pool of `connections` sockets. Latency runs from the moment a request
 * was due, so time spent waiting for a free socket counts (no coordinated omission).
 * autocannon's own rate limit releases each second's budget in a burst, which is not this.
 */
export async function runPaced(options: {
  origin: string;
  connections: number;
  rate: number;
  seconds: number;
  next: () => HttpRequestSpec;
  expect?: number;
}): Promise<Measurement> {
  const expected = options.expect ?? 200;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const origin = new URL(options.origin);
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const inflight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.round(options.rate * options.seconds);
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const spec = options.next();
    inflight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          {
            agent,
            host: origin.hostname,
            port: origin.port,
            method: spec.method,
            path: spec.path,
            headers: { ...spec.headers, host: origin.host },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === expected) latencies.push(performance.now() - due);
              else {
                errors += 1;
                firstError ??= `status ${res.statusCode}`;
              }
              resolve();
            });
          },
        );
        req.on('error', (error) => {
          errors += 1;
          firstError ??= error.message;
          resolve();
        });
        req.end(spec.body);
      }),
    );
  }
  await Promise.all(inflight);
  agent.destroy();
  return summarise(latencies, (performance.now() - started) / 1000, errors, options.connections, firstError ? { firstError } : {});
}

/** `seconds` of `task` at `connections` workers, measured, after `warmSeconds` of the same unmeasured. */
export async function warmedWorkers(options: {
  connections: number;
  seconds: number;
  warmSeconds: number;
  pid: number;
  postgresPids: () => Promise<number[]>;
  postgresTransactions: () => Promise<number>;
  task: () => Promise<void>;
}): Promise<Measurement> {
  await runWorkers({ concurrency: options.connections, seconds: options.warmSeconds, task: options.task });
  return runWorkers({
    concurrency: options.connections,
    seconds: options.seconds,
    pid: options.pid,
    postgresPids: options.postgresPids,
    postgresTransactions: options.postgresTransactions,
    task: options.task,
  });
}
