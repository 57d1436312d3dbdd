import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from '../logging/logger.js';
import { redactPath } from '../logging/redaction.js';
import { recordedStatus } from './client-abort.js';
import { isHealthPath } from './health.js';

declare module 'node:http' {
  interface ServerResponse {
    /** What a handler answering on the raw response adds to the request's access-log line (addToRequestLine). */
    accessLogFields?: Record<string, string>;
  }
}

/**
 * Adds fields to the request's access-log line. For handlers that answer on Node's response
 * and have no Koa context of ours, the OAuth provider's endpoints: a refused token request's
 * line carries its OAuth error and client (docs/operations.md, "HTTP conventions"). Values are
 * identifiers, never secrets.
 */
export function addToRequestLine(res: ServerResponse, fields: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) (res.accessLogFields ??= {})[name] = value;
}

/**
 * One log line per request: never the query string, headers or body, where secrets travel, and
 * the path as redactPath leaves it: an invitation or reset link's token is [redacted]
 * (docs/security.md, "Secrets in logs"). Built (and its path redacted) only when its level is
 * written. The main app's requestFrame takes `started` (process.hrtime.bigint()) before the
 * rest of the request and calls this, with the logger the request's child comes from, in a
 * `finally`, so a request that throws is logged too, with the status the error handler gave it.
 */
export function writeAccessLine(ctx: Context, started: bigint, logger: Logger): void {
  // The provider's own status for requests handed to it; 499 when the caller hung up first.
  const status = recordedStatus(ctx);
  const level = isHealthPath(ctx.method, ctx.path) && status < 400 ? 'debug' : 'info';
  // Asked of the logger the request's child is made from (it has the same level): the child
  // is made only for a line that is written (docs/benchmarks.md, "The token endpoint beside
  // the durable peer").
  if (!logger.isLevelEnabled(level)) return;
  const log = ctx.state.log as Logger | undefined;
  if (!log) return;
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  log[level](
    {
      method: ctx.method,
      path: redactPath(ctx.path),
      status,
      duration_ms: Math.round(durationMs * 10) / 10,
      ip: ctx.state.clientIp,
      host: ctx.state.host,
      ...ctx.res.accessLogFields,
    },
    'request',
  );
}
