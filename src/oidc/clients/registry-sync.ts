import type { Db } from '../../db/database.js';
import type { Logger } from '../../logging/logger.js';
import { readClientsFile } from './file-store.js';
import { syncClients } from './service.js';

/**
 * Keeps the database in step with the clients file while the server runs. Admin commands
 * write the database themselves, so this only matters for hand edits of the file; a bad
 * edit is logged and ignored (the last good registry stays live) instead of taking the
 * server down. At start, a bad file stops the start.
 */
export class ClientRegistrySync {
  private lastHash: string | undefined;
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

  start(intervalSeconds: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.syncNow()
        .catch((error: Error) => this.logger.error({ err: { message: error.message } }, 'clients file not applied'))
        .finally(() => {
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
