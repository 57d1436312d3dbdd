import type { ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.js';

/**
 * Work a request starts that its answer must not wait for or reveal: a password-reset
 * request answers the same page at the same speed whether or not the address has an
 * account, so the lookup, the link and the mail happen after the response has gone
 * (docs/security.md, "Password reset"). The one named place for such work, so nothing runs
 * unseen: each task has a name, a failure is logged with that name and the error's kind and
 * message only (tasks keep secrets out of their messages), and `drain()` waits for every task
 * started so far (tests, and the runtime's stop).
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger?: Logger) {}

  /** Runs `task` once `response` has been sent (or the client went away), never before. */
  afterResponse(response: ServerResponse, name: string, task: () => Promise<void>, log: Logger | undefined = this.logger): void {
    const started = new Promise<void>((resolve) => {
      if (response.writableFinished || response.destroyed) return resolve();
      const go = () => {
        response.off('finish', go);
        response.off('close', go);
        resolve();
      };
      response.on('finish', go);
      response.on('close', go);
    });
    this.track(started.then(() => this.runTask(name, task, log)));
  }

  /** Runs `task` now, without anyone waiting for it (e.g. a notice mail after a change committed). */
  run(name: string, task: () => Promise<void>, log: Logger | undefined = this.logger): void {
    this.track(this.runTask(name, task, log));
  }

  /** Resolves once every task started so far, and those they started, has settled. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** How many tasks are waiting or running. */
  get size(): number {
    return this.pending.size;
  }

  private track(promise: Promise<void>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  private async runTask(name: string, task: () => Promise<void>, log: Logger | undefined): Promise<void> {
    try {
      await task();
    } catch (error) {
      const e = error as Error;
      log?.warn({ task: name, error: { name: e?.name, message: e?.message } }, 'background task failed');
    }
  }
}
