/**
 * Baseline for the password and client-secret scenarios: how many argon2id verifications per
 * second this machine does, with `CONCURRENCY` in flight (1 = one core; the library runs each
 * on libuv's thread pool), for `SECONDS`, at MEMORY_KIB / TIME_COST / PARALLELISM.
 * Prints one JSON line {"argon2": {...}}.
 *
 * Run: node --import tsx bench/baseline/argon2-rate.ts
 */
import argon2 from 'argon2';

const memoryCost = Number(process.env.MEMORY_KIB ?? 19_456);
const timeCost = Number(process.env.TIME_COST ?? 2);
const parallelism = Number(process.env.PARALLELISM ?? 1);
const concurrency = Number(process.env.CONCURRENCY ?? 1);
const seconds = Number(process.env.SECONDS ?? 5);

const secret = 'a-benchmark-secret-of-realistic-length-0123456789';
const hash = await argon2.hash(secret, { type: argon2.argon2id, memoryCost, timeCost, parallelism });
// One warm-up verification (allocations, thread pool start).
await argon2.verify(hash, secret);

const latencies: number[] = [];
const started = performance.now();
const deadline = started + seconds * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      if (!(await argon2.verify(hash, secret))) throw new Error('verification failed');
      latencies.push(performance.now() - t0);
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0;
process.stdout.write(
  `${JSON.stringify({ argon2: { memoryCost, timeCost, parallelism, concurrency, completed: latencies.length, seconds: elapsed, rate: latencies.length / elapsed, p50: at(50), p99: at(99) } })}\n`,
);
