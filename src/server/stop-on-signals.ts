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

interface Closable {
  close(): Promise<void>;
}

export interface SignalStop {
  /**
   * Aborted at the first SIGTERM or SIGINT. Handed to the start, which then stops at its next
   * step and undoes what it did (see StartOptions.signal in start.ts).
   */
  readonly signal: AbortSignal;
  /**
   * What the signal closes once the start is over: the started server, or nothing when the start
   * failed or was interrupted (it undid itself). A signal that came during the start closes it at once.
   */
  serve(server: Closable | undefined): void;
}

/**
 * Installed before anything starts, so a signal at any stage of the start is handled: the first
 * SIGTERM or SIGINT is logged (`stopping`) and aborts `signal`; once `serve` has named what
 * runs, it is closed once (a second signal while it closes changes nothing), then the process
 * exits 0, or 1 when closing failed, after the log is flushed. The single process (main.ts), a
 * cluster primary and each cluster worker stop this way.
 */
export function stopOnSignals(logger: Logger, messages: StopMessages): SignalStop {
  const controller = new AbortController();
  let served: { server: Closable | undefined } | undefined;
  let closing = false;
  const close = () => {
    if (closing || !served || !controller.signal.aborted) return;
    closing = true;
    const closed = served.server ? served.server.close() : Promise.resolve();
    closed.then(
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
  const stop = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) return;
    logger[messages.level]({ signal }, messages.stopping);
    controller.abort(new Error(`start interrupted by ${signal}`));
    close();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return {
    signal: controller.signal,
    serve(server) {
      served ??= { server };
      close();
    },
  };
}
