/**
 * The gift_ingest scenario's ingesting process (docs/benchmarks.md, "Gift processing"): the mail
 * batch ingestor alone in a process of its own, so its RSS is measured alone. It connects to the
 * bench database, keeps its objects in a folder storage on STORAGE_DIR (where the harness put the
 * batch's ZIP, the batch row awaiting its upload), and runs `runOnce()` until BATCH_ID is no
 * longer awaiting its upload or uploaded: the first pass notices the upload (the object is there),
 * claims the batch and ingests it, as the server's job does every 5 s.
 *
 * Prints one JSON line {"ingest": {ms, outcome, rssBeforeMb, peakRssMb, highWaterMb, passes}}:
 * ms from the first pass's start to the batch's end; peakRssMb the largest RSS sampled every
 * 20 ms meanwhile (a timer: it misses what rises and falls while the event loop is busy);
 * highWaterMb the kernel's high-water mark (VmHWM), reset when the clock starts (null where
 * it cannot be reset).
 *
 * Environment: DATABASE_URL, STORAGE_DIR, BATCH_ID, MAX_BATCH_BYTES (default 512 MiB).
 */
import fs from 'node:fs';
import { createDatabase } from '../../src/db/database.js';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const db = createDatabase({ url: process.env.DATABASE_URL!, poolMax: 10, applicationName: 'almoner-bench-ingest' });
const batchId = process.env.BATCH_ID!;
const ingestor = new MailBatchIngestor({
  db,
  storage: new FolderStorage(process.env.STORAGE_DIR!),
  maxBatchBytes: Number(process.env.MAX_BATCH_BYTES ?? 536_870_912),
});

function highWaterMark(): number | undefined {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) * 1024 : undefined;
}

function resetHighWaterMark(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return highWaterMark() !== undefined;
  } catch {
    return false;
  }
}

const status = async () =>
  await db.selectFrom('mail_batches').select(['status', 'refusal_reason']).where('id', '=', batchId).executeTakeFirstOrThrow();

try {
  await status(); // the pool's first connection, before the clock starts
  const rssBefore = process.memoryUsage.rss();
  // The loader's and the imports' high-water mark is forgotten (Linux: "5" to clear_refs resets VmHWM), so the end's is the ingestion's.
  const hwmReset = resetHighWaterMark();
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  const t0 = performance.now();
  let passes = 0;
  let row = await status();
  // Another ingestor (the server's) could claim the batch between this one's notice and claim: then it never ends here.
  const deadline = Date.now() + 600_000;
  while ((row.status === 'awaiting_upload' || row.status === 'uploaded') && Date.now() < deadline) {
    passes += 1;
    const tick = await ingestor.runOnce();
    if (!tick.ingested) await new Promise((resolve) => setTimeout(resolve, 20));
    row = await status();
  }
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  process.stdout.write(
    `${JSON.stringify({
      ingest: {
        ms: Math.round(ms),
        outcome: row.status,
        refusal: row.refusal_reason,
        passes,
        rssBeforeMb: mb(rssBefore),
        peakRssMb: mb(peak),
        highWaterMb: hwmReset ? mb(highWaterMark() ?? 0) : null,
      },
    })}\n`,
  );
} finally {
  await db.destroy();
}
