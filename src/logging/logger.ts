import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { serializeError } from './error-serializer.js';
import { redactValue } from './redaction.js';

export type { Logger };

/** `json`: one JSON object a line (production, log shippers); `pretty`: a readable line each (dev). */
export type LogFormat = 'json' | 'pretty';

/**
 * Redaction is a second line of defence: code never logs headers, bodies or query strings,
 * which is where tokens, codes, secrets and passwords travel, and logs a request's path through
 * redactPath (docs/security.md, "Secrets in logs"). Beside the fields redacted by name, every
 * string a line carries, its message included, loses any query string, secret path or
 * credential it names (redaction.ts). Errors go under `err` as the Error itself;
 * serializeError keeps their message and stack (redacted the same way) and nothing else.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  return pino(
    {
      level,
      base: { service: 'almoner' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: serializeError },
      hooks: {
        logMethod(args, method) {
          return method.apply(this, args.map((arg) => redactValue(arg)) as Parameters<typeof method>);
        },
      },
      redact: {
        paths: [
          'password', '*.password', 'secret', '*.secret', 'client_secret', '*.client_secret', 'token', '*.token',
          'authorization', '*.authorization', 'headers.authorization', 'headers.cookie', 'cookie', '*.cookie',
          'databaseUrl', 'database_url', '*.database_url',
        ],
        censor: '[redacted]',
      },
    },
    format === 'pretty' ? prettyStream(destination) : destination,
  );
}

/**
 * Formats in this thread and writes synchronously (no transport worker), so a log line and
 * what the process writes to stdout next (the dev banner after "ready") keep their order.
 */
function prettyStream(destination: pino.DestinationStream | undefined): pino.DestinationStream {
  return pinoPretty({
    destination: destination ?? 1,
    sync: true,
    colorize: destination === undefined ? process.stdout.isTTY === true : false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
}
