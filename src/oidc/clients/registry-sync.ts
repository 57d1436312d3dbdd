import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Db } from '../../db/database.js';
import type { Logger } from '../../logging/logger.js';
import { readClientsFile } from './file-store.js';
import { ClientRegistryError } from './schema.js';
import { syncClients } from './service.js';

/**
 * Keeps the database in step with the clients file while the server runs. Admin commands
 * write the database themselves, so this only matters for hand edits of the file; a bad
 * edit is logged and ignored (the last good registry stays live) instead of taking the
 * server down. At start, a bad file stops the start.
 */
export class ClientRegistrySync {
  private lastHash: string | undefined;
  /** Fingerprint of the bad file last reported: the same bad file is not reported on every poll. */
  private reportedBadFile: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  /** Throws ClientRegistryError for an invalid file: the caller refuses to start. */
  async syncNow(): Promise<void> {
    const snapshot = readClientsFile(this.file);
    if (snapshot.hash === this.lastHash) return;
    await syncClients(this.db, snapshot.entries);
    this.lastHash = snapshot.hash;
  }

  /**
   * One pass of the poller; never throws. A bad file is reported once per change of its
   * content (an editor's half-written save is not repeated every few seconds), and its
   * repair once; other failures (the database) are logged on each pass.
   */
  async poll(): Promise<void> {
    try {
      await this.syncNow();
      if (this.reportedBadFile !== undefined) {
        this.reportedBadFile = undefined;
        this.logger.info({ file: this.file }, 'clients file applied again');
      }
    } catch (error) {
      if (!(error instanceof ClientRegistryError)) {
        this.logger.error({ err: error, file: this.file }, 'clients file not applied');
        return;
      }
      const fingerprint = fileFingerprint(this.file);
      if (fingerprint === this.reportedBadFile) return;
      this.reportedBadFile = fingerprint;
      this.logger.error({ err: error, file: this.file }, 'clients file not applied; the last good registry stays live until it is fixed');
    }
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
