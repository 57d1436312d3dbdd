import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logging/logger.js';

/**
 * A real logger at `level` whose output the test keeps: `chunks` as written (one or more
 * JSON lines each), `records()` parsed one per line.
 */
export function captureLogs(level = 'trace'): { chunks: string[]; records(): Record<string, unknown>[]; logger: Logger } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return {
    chunks,
    records: () => chunks.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as Record<string, unknown>),
    logger: createLogger(level, sink),
  };
}
