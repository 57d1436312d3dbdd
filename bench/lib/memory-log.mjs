// Loaded into a server under test with --import when BENCH_MEMORY_LOG=<dir> (bench/run.ts): every
// second, one JSON line in <dir>/memory-<pid>.jsonl with what the process's memory is made of:
// RSS split into anonymous and file pages (/proc/<pid>/status), V8's heap by space (physical
// sizes), and what lives outside the heap (docs/benchmarks.md, "The token endpoint beside the
// durable peer", Memory).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

const file = path.join(process.env.BENCH_MEMORY_LOG ?? '.', `memory-${process.pid}.jsonl`);
const started = Date.now();
/** @param {number} bytes */
const mb = (bytes) => Math.round(bytes / 1048576);

/**
 * @param {string} text
 * @param {string} key
 */
function statusMb(text, key) {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
  return match ? Math.round(Number(match[1]) / 1024) : null;
}

setInterval(() => {
  const usage = process.memoryUsage();
  let status = '';
  try {
    status = fs.readFileSync(`/proc/${process.pid}/status`, 'utf8');
  } catch {
    // not Linux: the RSS parts stay null
  }
  const line = {
    seconds: (Date.now() - started) / 1000,
    rss: mb(usage.rss),
    rss_anon: statusMb(status, 'RssAnon'),
    rss_file: statusMb(status, 'RssFile'),
    heap_total: mb(usage.heapTotal),
    heap_used: mb(usage.heapUsed),
    external: mb(usage.external),
    array_buffers: mb(usage.arrayBuffers),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.physical_space_size)])),
  };
  fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
}, 1000).unref();
