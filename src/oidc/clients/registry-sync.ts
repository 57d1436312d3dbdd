import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Db } from '../../db/database.js';
import type { Logger } from '../../logging/logger.js';
import { readClientsFile } from './file-store.js';
import type { Profile } from '../../webhooks/targets.js';
import type { ParentFile } from './revision.js';
import { ClientRegistryError } from './schema.js';
import { appliedBy, reconcileClientsFile } from './service.js';

/**
 * Keeps the database in step with the clients file while the server runs. Admin commands
 * write the database themselves, so this only matters for hand edits of the file; a bad
 * edit is logged and ignored (the last good registry stays live) instead of taking the
 * server down. At start, a bad file stops the start.
 *
 * The file becomes the registry only when it is newer than the registry's current revision
 * or an edit of it (revision.ts); an older or diverging file (a stale copy on another
 * machine) is refused, said once in the log, and named on /readyz until it is in step
 * (docs/operations.md, "The clients file across machines").
 */
export class ClientRegistrySync {
  /**
   * The file as the last pass read it: a pass over the same file does nothing, not even a
   * query (a registry moved on by another machine is judged when this file changes or the
   * process restarts; it never takes this process's clients away meanwhile).
   */
  private lastSeen: { exists: boolean; contentHash: string; revision: number | undefined } | undefined;
  /** fileFingerprint of the bytes the last judged pass read. */
  private judgedFingerprint: string | undefined;
  /** The file as last read while it held the registry's current content: a change from it is an edit. */
  private parent: ParentFile | undefined;
  /** Why the file is not applied (older or diverging), while it is not. */
  private refusal: string | undefined;
  /** The absence of a file last logged. */
  private reportedAbsence: string | undefined;
  /** Why the file cannot be read as a registry, while it cannot. */
  private invalid: string | undefined;
  /** Fingerprint of the bad file last reported: the same bad file is not reported on every poll. */
  private reportedBadFile: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly logger: Logger,
    /** The deployment's profile, whose address rules the file's jwks_uri are held to. */
    private readonly profile: Profile = 'production',
  ) {}

  /**
   * Throws ClientRegistryError for an invalid file: the caller refuses to start. An older or
   * diverging file is not applied and does not throw: the server serves the registry the
   * database holds, and warnings() says why.
   */
  async syncNow(): Promise<void> {
    // The same bytes as the last pass that was judged: not even parsed again.
    const fingerprint = fileFingerprint(this.file);
    if (fingerprint === this.judgedFingerprint) return;
    const snapshot = readClientsFile(this.file, this.profile);
    const seen = this.lastSeen;
    if (seen && seen.exists === snapshot.exists && seen.contentHash === snapshot.contentHash && seen.revision === snapshot.revision) {
      this.judgedFingerprint = fingerprint;
      return;
    }
    const result = await reconcileClientsFile(this.db, snapshot, {
      file: this.file,
      parent: this.parent,
      appliedBy: appliedBy(`server pid ${process.pid}`, this.file),
    });
    this.lastSeen = { exists: snapshot.exists, contentHash: snapshot.contentHash, revision: snapshot.revision };
    this.judgedFingerprint = fingerprint;
    const { verdict } = result;
    if (verdict.kind === 'current' || verdict.kind === 'apply') {
      this.parent = { contentHash: snapshot.contentHash, revision: snapshot.revision };
      if (verdict.kind === 'apply')
        this.logger.info(
          { file: this.file, revision: verdict.revision, clients: snapshot.entries.length, why: verdict.why },
          `clients file applied as registry revision ${verdict.revision}`,
        );
      if (this.refusal !== undefined)
        this.logger.info({ file: this.file, revision: result.revision }, 'clients file in step with the client registry again');
      this.refusal = undefined;
      return;
    }
    const message = `${result.refusal!}; this process serves the registry the database holds`;
    if (verdict.kind === 'absent') {
      // No file is not a stale file: nothing to warn about on /readyz, said once in the log.
      if (message !== this.reportedAbsence) this.logger.info({ file: this.file, registry_revision: result.revision ?? null }, message);
      this.reportedAbsence = message;
      this.refusal = undefined;
      return;
    }
    if (message !== this.refusal) {
      this.logger.warn(
        { file: this.file, file_revision: snapshot.revision ?? null, registry_revision: result.revision ?? null, verdict: verdict.kind },
        message,
      );
    }
    this.refusal = message;
  }

  /**
   * One pass of the poller; never throws. A bad file is reported once per change of its
   * content (an editor's half-written save is not repeated every few seconds), and its
   * repair once; other failures (the database) are logged on each pass.
   */
  async poll(): Promise<void> {
    try {
      await this.syncNow();
      this.invalid = undefined;
      if (this.reportedBadFile !== undefined) {
        this.reportedBadFile = undefined;
        this.logger.info({ file: this.file }, 'clients file applied again');
      }
    } catch (error) {
      if (!(error instanceof ClientRegistryError)) {
        this.logger.error({ err: error, file: this.file }, 'clients file not applied');
        return;
      }
      this.invalid = `${this.file}: invalid, not applied; the last good registry stays live (${error.problems.length === 1 ? error.problems[0] : `${error.problems.length} problems, see the log or clients validate`})`;
      const fingerprint = fileFingerprint(this.file);
      if (fingerprint === this.reportedBadFile) return;
      this.reportedBadFile = fingerprint;
      this.logger.error({ err: error, file: this.file }, 'clients file not applied; the last good registry stays live until it is fixed');
    }
  }

  /** What /readyz shows: why this process's clients file is not the registry, if it is not. */
  warnings(): { code: string; detail: string }[] {
    return [
      ...(this.invalid === undefined ? [] : [{ code: 'clients_file_invalid', detail: this.invalid }]),
      ...(this.refusal === undefined ? [] : [{ code: 'clients_file_not_applied', detail: this.refusal }]),
    ];
  }

  start(intervalSeconds: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.poll().finally(() => {
        this.running = undefined;
      });
    }, intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

function fileFingerprint(file: string): string {
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch (error) {
    return `unreadable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
}
