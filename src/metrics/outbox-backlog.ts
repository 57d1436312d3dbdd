import type { Db } from '../db/database.js';
import { readOutboxBacklog, type BacklogRow } from '../webhooks/deliveries-repository.js';

/** A scrape never waits longer than this for the database (and the query is cancelled there too). */
export const OUTBOX_QUERY_TIMEOUT_MS = 2_000;

/**
 * The webhook outbox backlog, read at scrape time: one query over the pending deliveries'
 * partial index, under a statement timeout of its own. Only one runs at a time; a scrape that
 * finds it still running waits for it at most OUTBOX_QUERY_TIMEOUT_MS, then reports nothing.
 */
export class OutboxBacklog {
  private running: Promise<BacklogRow[]> | undefined;
  private timedOut: Promise<BacklogRow[]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly onFailure: () => void,
  ) {}

  async read(): Promise<BacklogRow[] | undefined> {
    if (!this.running) {
      const query = readOutboxBacklog(this.db, OUTBOX_QUERY_TIMEOUT_MS);
      this.running = query;
      query
        .then(
          () => undefined,
          () => {
            if (this.timedOut !== query) this.onFailure();
          },
        )
        .finally(() => {
          if (this.running === query) this.running = undefined;
        });
    }
    const running = this.running;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(resolve, OUTBOX_QUERY_TIMEOUT_MS, 'timeout');
    });
    try {
      const result = await Promise.race([running, timeout]);
      if (result !== 'timeout') return result;
      if (this.timedOut !== running) {
        this.timedOut = running;
        this.onFailure();
      }
      return undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
