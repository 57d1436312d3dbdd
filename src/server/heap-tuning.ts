import v8 from 'node:v8';
import { nodeOptionsFromEnv } from '../config/node-options.js';

/**
 * How far V8 lets the old generation grow past what the last full collection left live.
 * Left to itself V8 grows it up to fourfold under a steady allocation rate: the gateway's
 * 32 concurrent 70 KB pages promote a few MB per scavenge, and the server's 32 MB of live
 * heap became 140 MB between full collections (peak RSS 243-250 MB in the gateway run alone).
 * At 1.5× the full collections come more often but each is small (about 10 ms for 32 MB);
 * measured: peak RSS 156-161 MB in the same run, throughput within the noise.
 *
 * This V8 setting is read at every collection, so it can be set once the process runs
 * (unlike the young generation's size, which is fixed when the heap is created: see the
 * start command in docs/operations.md, "Starting and stopping"). An operator's own --heap-growing-percent wins.
 */
export const HEAP_GROWING_PERCENT = 50;

export function tuneHeap(argv: readonly string[] = process.execArgv, nodeOptions = nodeOptionsFromEnv()): boolean {
  const given = [...argv, ...nodeOptions.split(/\s+/)].some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  if (given) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
