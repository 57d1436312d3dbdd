import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { serializeError } from './error-serializer.js';
import { redactValue } from './redaction.js';

export type { Logger };

/**
 * `json`: one JSON object a line (production, log shippers); `pretty`: a readable line each
 * (dev), by pino-pretty as prettyFormat() loads it.
 */
export type LogFormat = 'json' | { pretty: typeof PinoPretty };

/**
 * The dev profile's readable format, or undefined when pino-pretty is not installed: it is a
 * dev dependency, which a production install (`npm ci --omit=dev`, the Docker image) omits,
 * so it is loaded here only, when the dev profile asks for it
 * (test/architecture/dev-only-packages.test.ts).
 */
export async function prettyFormat(): Promise<LogFormat | undefined> {
  try {
    return { pretty: (await import('pino-pretty')).default };
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ERR_MODULE_NOT_FOUND' && message.includes('pino-pretty')) return undefined;
    throw error;
  }
}

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
          'password',
          '*.password',
          'secret',
          '*.secret',
          'client_secret',
          '*.client_secret',
          'token',
          '*.token',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'headers.cookie',
          'cookie',
          '*.cookie',
          'databaseUrl',
          'database_url',
          '*.database_url',
        ],
        censor: '[redacted]',
      },
    },
    format === 'json' ? destination : prettyStream(format.pretty, destination),
  );
}

/**
 * Formats in this thread and writes synchronously (no transport worker), so a log line and
 * what the process writes to stdout next (the dev banner after "ready") keep their order.
 */
function prettyStream(pinoPretty: typeof PinoPretty, destination: pino.DestinationStream | undefined): pino.DestinationStream {
  return pinoPretty({
    destination: destination ?? 1,
    sync: true,
    colorize: destination === undefined ? process.stdout.isTTY === true : false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
}
