import type { Db } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { ObjectStorage } from '../storage/object-storage.js';
import { ingestBatch, type IngestionOutcome } from './batch-ingestion.js';
import {
  claimUploadedBatch,
  extendLease,
  finishBatch,
  listAwaitingUpload,
  markExpired,
  markUploaded,
  type ClaimedBatch,
} from './mail-batches-repository.js';

export interface MailBatchIngestorOptions {
  db: Db;
  storage: ObjectStorage;
  logger?: Logger;
  /** The clock; injectable so tests can pass an upload's expiry or a lease. */
  now?: () => Date;
  /** How long a claim holds its batch before another ingestor may take it over (default 600 s). */
  leaseSeconds?: number;
  /** Tries before a batch is refused as "could not be processed" (default 5). */
  maxAttempts?: number;
  /** The largest batch read (default MAX_BATCH_BYTES, 512 MiB). */
  maxBatchBytes?: number;
  /** Batches awaiting upload looked at per tick (default 100). */
  uploadsPerTick?: number;
}

/** How often the server's ingestor looks for uploads and batches to ingest. */
export const MAIL_BATCH_POLL_MS = 5_000;
export const DEFAULT_LEASE_SECONDS = 600;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const GAVE_UP_REASON = 'could not be processed';

export interface TickResult {
  /** Batches found uploaded this tick. */
  uploaded: number;
  /** Batches whose upload time ran out with nothing uploaded. */
  expired: number;
  /** The batch claimed and what became of it, when there was one. */
  ingested?: { batchId: string; outcome: IngestionOutcome | { status: 'retry'; error: string } };
}

/**
 * The mail batch job (docs/gift-processing.md, "Ingestion"), modelled on the webhook dispatcher:
 * each tick notices finished uploads and expired ones, then claims one uploaded batch under a
 * lease (safe with several processes: skip locked, and every outcome fenced to its claim) and
 * ingests it. An unexpected error leaves the batch for a retry once the lease runs out; after
 * `maxAttempts` tries it is refused.
 */
export class MailBatchIngestor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopping = false;

  constructor(private readonly options: MailBatchIngestorOptions) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** awaiting_upload → uploaded when the object is there; → expired when its time ran out without it. */
  async noticeUploads(): Promise<{ uploaded: number; expired: number }> {
    const { db, storage } = this.options;
    let uploaded = 0;
    let expired = 0;
    for (const batch of await listAwaitingUpload(db, this.options.uploadsPerTick ?? 100)) {
      const head = await storage.head(batch.storage_key);
      const now = this.now();
      if (head) {
        if (await markUploaded(db, batch.id, head.size, now)) uploaded += 1;
      } else if (batch.upload_expires_at <= now) {
        if (await markExpired(db, batch.id, now)) expired += 1;
      }
    }
    return { uploaded, expired };
  }

  /** Claims one uploaded batch and ingests it; undefined when none is free. */
  async ingestNext(): Promise<TickResult['ingested']> {
    const { db } = this.options;
    const leaseSeconds = this.options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const claim = await claimUploadedBatch(db, this.now(), leaseSeconds);
    if (!claim) return undefined;
    const maxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    // A process that died mid-batch leaves its tries counted: past the limit, no further try.
    if (claim.attempts > maxAttempts) return { batchId: claim.id, outcome: await this.giveUp(claim) };
    // A big batch may outlast its lease: renewed every third of it while this try runs.
    const heartbeat = setInterval(
      () => {
        extendLease(db, claim, new Date(this.now().getTime() + leaseSeconds * 1000)).catch((error: Error) =>
          this.options.logger?.warn({ batch: claim.id, err: error }, 'mail batch lease not renewed'),
        );
      },
      (leaseSeconds * 1000) / 3,
    );
    heartbeat.unref();
    try {
      const outcome = await ingestBatch(
        { db, storage: this.options.storage, now: () => this.now(), maxBatchBytes: this.options.maxBatchBytes },
        claim,
      );
      const { unusedKeys: _unused, ...logged } = { unusedKeys: undefined, ...outcome };
      this.options.logger?.info({ batch: claim.id, attempt: claim.attempts, ...logged }, 'mail batch ingestion');
      return { batchId: claim.id, outcome };
    } catch (error) {
      if (claim.attempts >= maxAttempts) {
        this.options.logger?.error({ batch: claim.id, attempt: claim.attempts, err: error }, 'mail batch could not be processed');
        return { batchId: claim.id, outcome: await this.giveUp(claim) };
      }
      this.options.logger?.warn(
        { batch: claim.id, attempt: claim.attempts, err: error },
        'mail batch ingestion failed; retried after its lease',
      );
      return { batchId: claim.id, outcome: { status: 'retry', error: (error as Error).message } };
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async giveUp(claim: ClaimedBatch): Promise<IngestionOutcome> {
    const done = await finishBatch(this.options.db, claim, { status: 'refused', refusalReason: GAVE_UP_REASON }, this.now());
    return done ? { status: 'refused', line: null, reason: GAVE_UP_REASON } : { status: 'superseded' };
  }

  /** One pass: notice uploads, then ingest at most one batch. Tests call it directly. */
  async runOnce(): Promise<TickResult> {
    const noticed = await this.noticeUploads();
    const ingested = await this.ingestNext();
    return { ...noticed, ...(ingested ? { ingested } : {}) };
  }

  private tick(): void {
    if (this.running || this.stopping) return;
    this.running = this.runOnce()
      .catch((error: Error) => this.options.logger?.warn({ err: error }, 'mail batch tick failed'))
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Polls every `pollMs`; a tick still running makes the next one skip. */
  start(pollMs: number = MAIL_BATCH_POLL_MS): void {
    this.stopping = false;
    this.timer = setInterval(() => this.tick(), pollMs);
    this.timer.unref();
  }

  /** Stops polling and waits for a tick in flight (a batch being written finishes; its lease covers a crash). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    await this.running;
  }
}
