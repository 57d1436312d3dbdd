/**
 * The gift_ingest scenario's ingesting process (docs/benchmarks.md, "Gift processing"): the mail
 * batch ingestor alone in a process of its own, so its RSS is measured alone. It connects to the
 * bench database, keeps its objects in a folder storage on STORAGE_DIR (where the harness put the
 * batch's ZIP, the batch row awaiting its upload), and runs `runOnce()` until BATCH_ID is no
 * longer awaiting its upload or uploaded: the first pass notices the upload (the object is there),
 * claims the batch and ingests it, as the server's job does every 5 s.
 *
 * Prints one JSON line {"ingest": {ms, outcome, rssBeforeMb, peakRssMb, maxRssBeforeMb, maxRssMb, passes}}:
 * ms from the first pass's start to the batch's end; peakRssMb the largest RSS sampled every
 * 20 ms meanwhile (a timer: it misses what rises and falls while the event loop is busy);
 * maxRssMb the kernel's high-water mark of the whole process (getrusage), maxRssBeforeMb the
 * same before the clock started.
 *
 * Environment: DATABASE_URL, STORAGE_DIR, BATCH_ID, MAX_BATCH_BYTES (default 512 MiB).
 */
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

const status = async () =>
  await db.selectFrom('mail_batches').select(['status', 'refusal_reason']).where('id', '=', batchId).executeTakeFirstOrThrow();

try {
  await status(); // the pool's first connection, before the clock starts
  const rssBefore = process.memoryUsage.rss();
  // The high-water mark so far (the loader's, the imports'): a larger one at the end was reached while ingesting.
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
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
        maxRssBeforeMb: mb(maxRssBefore),
        maxRssMb: mb(process.resourceUsage().maxRSS * 1024),
      },
    })}\n`,
  );
} finally {
  await db.destroy();
}
