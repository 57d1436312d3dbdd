import type { Logger } from '../logging/logger.js';

export interface StopMessages {
  level: 'info' | 'debug';
  /** Logged when the first signal arrives, with the signal. */
  stopping: string;
  /** Logged once closed, if given. */
  stopped?: string;
  /** Logged with the error when closing failed. */
  failed: string;
}

/**
 * SIGTERM or SIGINT closes `server` once (a second signal while it closes changes nothing),
 * then the process exits 0, or 1 when closing failed, after the log is flushed. The single
 * process (main.ts) and each cluster worker stop this way.
 */
export function stopOnSignals(server: { close(): Promise<void> }, logger: Logger, messages: StopMessages): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger[messages.level]({ signal }, messages.stopping);
    server.close().then(
      () => {
        if (messages.stopped) logger[messages.level](messages.stopped);
        logger.flush(() => process.exit(0));
      },
      (error: Error) => {
        logger.error({ err: error }, messages.failed);
        logger.flush(() => process.exit(1));
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
