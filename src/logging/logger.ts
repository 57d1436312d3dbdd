import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs. Redaction is a second line of defence: code never logs headers, bodies or query
 * strings, which is where tokens, codes, secrets and passwords travel.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'almoner' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'password', '*.password', 'secret', '*.secret', 'client_secret', '*.client_secret', 'token', '*.token',
          'authorization', '*.authorization', 'headers.authorization', 'headers.cookie', 'cookie', '*.cookie',
          'databaseUrl', 'database_url', '*.database_url',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
