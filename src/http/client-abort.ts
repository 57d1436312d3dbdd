import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The status the access log and the request metrics give a request whose caller hung up
 * before it was answered (the convention of nginx's 499, "client closed request"). Nothing is
 * sent with it: there is nobody left to send it to (docs/operations.md, "HTTP conventions").
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Whether the caller went away before the answer was written: its request stream aborted or its connection closed. */
export function callerHungUp(req: IncomingMessage, res: ServerResponse): boolean {
  if (res.writableEnded) return false;
  return req.readableAborted || Boolean(req.socket?.destroyed);
}

/** The errors an error's `cause` chain holds, the error first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e && typeof e === 'object' && chain.length < 8 && !chain.includes(e); e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

/**
 * Whether an error is the request's own stream failing: the error it was destroyed with, Node's
 * "aborted" reset (code ECONNRESET without a system call: no socket of ours raised it), its HTTP
 * parser's error for a connection that ended mid-request (HPE_…), or a body reader's "request
 * aborted" (ECONNABORTED). The database's connection errors come from pg's own
 * socket, with the system call that failed, and never match.
 */
function isRequestStreamError(error: unknown, req: IncomingMessage): boolean {
  if (error === req.errored) return true;
  const { code, message, syscall, type } = error as { code?: unknown; message?: unknown; syscall?: unknown; type?: unknown };
  if (code === 'ECONNABORTED' || type === 'request.aborted') return true;
  // Node's HTTP parser on the caller's connection (HPE_INVALID_EOF_STATE: it ended mid-body).
  if (typeof code === 'string' && code.startsWith('HPE_')) return true;
  return code === 'ECONNRESET' && message === 'aborted' && syscall === undefined;
}

/**
 * A client abort, not a failure of ours (docs/operations.md, "HTTP conventions"): the caller hung up
 * and the error is its request stream's. Logged at debug without a stack and counted as
 * CLIENT_CLOSED_REQUEST; never an outage of the database.
 */
export function isClientAbort(error: unknown, req: IncomingMessage | undefined): boolean {
  if (!req || !(req.readableAborted || req.socket?.destroyed)) return false;
  return causes(error).some((e) => isRequestStreamError(e, req));
}

/** What the access log and the metrics record as a request's status: its own, or 499 when the caller left first. */
export function recordedStatus(ctx: { req: IncomingMessage; res: ServerResponse; respond?: boolean; status: number }): number {
  if (callerHungUp(ctx.req, ctx.res)) return CLIENT_CLOSED_REQUEST;
  // Requests handed to the provider (ctx.respond = false) wrote their own status.
  return ctx.respond === false ? ctx.res.statusCode : ctx.status;
}
