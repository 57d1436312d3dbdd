import fs from 'node:fs';
import path from 'node:path';
import type { Measurement } from './load.js';

export interface Check {
  label: string;
  met: boolean;
}

export interface ScenarioResult {
  id: string;
  title: string;
  almoner: Measurement;
  baselineLabel: string;
  baseline?: Measurement;
  /** almoner.rps / baseline.rps */
  ratio?: number;
  /** A second baseline in the same run: for the token scenarios, the durable peer (baseline is then the in-memory provider). */
  peer?: { label: string; measurement: Measurement; /** almoner.rps / peer rps */ ratio?: number };
  /** Open-loop runs of both servers at one offered rate (requests/s), when the scenario has them. */
  paced?: { rate: number; almoner: Measurement; baseline: Measurement };
  target: string;
  checks: Check[];
  /** Anything the table cannot say (setup, unit, caveats). */
  detail?: string;
  /** The full flow: CPU the user agents (the bench process, on the same cores) used per flow. */
  agent_cpu_ms_per_flow?: number;
  /** A DPoP row: per request, it minus its Bearer twin (the baseline): latency, time at capacity, CPU, transactions. */
  difference_to_baseline?: Record<string, number>;
  /** false: the row has no latency (a bulk import); its p50 / p99 columns show —. */
  latency?: false;
  /** The id_token row: server CPU ms per refresh with an RS256, an ES256 or no id_token (in-memory provider and Almoner). */
  id_token_cpu_ms?: Record<string, number | null>;
  /** The DPoP proof check: µs per proof, by algorithm. */
  proof_check_us?: Record<string, number>;
}

export interface StartResult {
  label: string;
  /** Milliseconds from spawning `node --import tsx src/main.ts` to GET /readyz answering 200. */
  ms: number[];
}

export interface BenchResults {
  date: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    /** The load generator's (this process's) node. */
    node: string;
    /** The node the servers under test ran on, as the server reported it (absent in runs before it was recorded). */
    serverNode?: string;
    postgres: string;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
  };
  settings: Record<string, unknown>;
  scenarios: ScenarioResult[];
  starts: StartResult[];
  startChecks: Check[];
  peakRssMb: number;
  rssCheck: Check;
  argon2: Record<string, unknown>;
  explain?: string;
  wallSeconds: number;
}

const fmt = (value: number | undefined, digits = 1) =>
  value === undefined
    ? '—'
    : value >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value > 0 && value < 0.1
        ? value.toPrecision(2)
        : value.toFixed(digits);
const verdict = (checks: Check[]) =>
  checks.length ? checks.map((c) => `${c.met ? 'met' : '**missed**'}: ${c.label}`).join('; ') : 'information only';
const times = (r: number | undefined) => (r === undefined ? '—' : `${r.toFixed(2)}×`);

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The results table (markdown), as printed at the end of a run and kept in docs/benchmarks.md. */
export function markdownTable(results: BenchResults): string {
  const cpu = (m: Measurement | undefined) =>
    m?.serverCpuMs === undefined
      ? '—'
      : `${fmt(m.serverCpuMs, 2)}${m.postgresCpuMs !== undefined ? ` + ${fmt(m.postgresCpuMs, 2)}` : ''}${m.transactions !== undefined ? ` (${fmt(m.transactions, 1)} tx)` : ''}`;
  const lines = [
    '| scenario | Almoner req/s | p50 / p99 ms | errors | peak RSS MB | CPU ms/req: server + PostgreSQL (transactions) | baseline (same run) | baseline req/s | baseline p50 / p99 ms | baseline CPU ms/req | durable peer req/s | peer p50 / p99 ms | peer CPU ms/req | ratio to peer | ratio to baseline | target | verdict |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const s of results.scenarios) {
    const a = s.almoner;
    const b = s.baseline;
    const p = s.peer?.measurement;
    lines.push(
      `| ${s.title} | ${fmt(a.rps)} | ${s.latency === false ? '—' : `${fmt(a.p50)} / ${fmt(a.p99)}`} | ${a.errors} | ${fmt(a.peakRssMb)} | ${cpu(a)} | ${s.baselineLabel} | ${fmt(b?.rps)} | ${b ? `${fmt(b.p50)} / ${fmt(b.p99)}` : '—'} | ${cpu(b)} | ${fmt(p?.rps)} | ${p ? `${fmt(p.p50)} / ${fmt(p.p99)}` : '—'} | ${cpu(p)} | ${times(s.peer?.ratio)} | ${times(s.ratio)} | ${s.target} | ${verdict(s.checks)} |`,
    );
  }
  const starts = results.starts.map((s) => `${s.label}: ${s.ms.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s`).join('; ');
  const dashes = (n: number) => Array.from({ length: n }, () => '—').join(' | ');
  lines.push(
    `| server start to ready | ${dashes(14)} | restart ≤ 3 s | ${results.starts.length ? `${verdict(results.startChecks)} (${starts})` : 'not run'} |`,
  );
  lines.push(
    `| peak RSS under load (one server process, all scenarios but the ALMONER_WORKERS=2 rows) | ${dashes(3)} | ${fmt(results.peakRssMb)} | ${dashes(10)} | ≤ 250 MB | ${verdict([results.rssCheck])} |`,
  );
  return lines.join('\n');
}

function details(results: BenchResults): string {
  const m = results.machine;
  const lines = [
    `Run of ${results.date} (${Math.round(results.wallSeconds)} s in all): ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.serverNode ? `server and baselines on Node ${m.serverNode}, load generator on Node ${m.node}` : `Node ${m.node}`}, ${m.postgres}; load average ${m.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')} at the start, ${m.loadAverageAtEnd.map((l) => l.toFixed(2)).join(' ')} at the end.`,
    '',
    ...results.scenarios
      .filter((s) => s.detail || s.peer)
      .map(
        (s) =>
          `- **${s.title}**: ${[s.detail?.replace(/\.$/, ''), s.peer ? `the durable peer is ${s.peer.label}` : undefined].filter(Boolean).join('; ')}.`,
      ),
    `- **argon2id on this machine** (same run, own process): ${Object.entries(results.argon2)
      .map(([k, v]) => `${k}: ${typeof v === 'number' ? v.toFixed(1) : JSON.stringify(v)}`)
      .join('; ')}.`,
  ];
  return lines.join('\n');
}

export const BEGIN = '<!-- bench:results:begin (written by npm run bench; edit outside these markers) -->';
export const END = '<!-- bench:results:end -->';

/** Replaces the generated part of docs/benchmarks.md, keeping the prose and notes around it. */
export function writeDoc(file: string, results: BenchResults): void {
  const generated = [
    BEGIN,
    '',
    markdownTable(results),
    '',
    details(results),
    '',
    `Raw numbers: \`bench/results/${path.basename(resultsFileName(results))}\`.`,
    '',
    END,
  ].join('\n');
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  let next: string;
  if (start >= 0 && end > start) next = current.slice(0, start) + generated + current.slice(end + END.length);
  else next = `# Benchmarks\n\n${generated}\n`;
  fs.writeFileSync(file, next);
}

export function resultsFileName(results: BenchResults): string {
  return `${results.date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`;
}
