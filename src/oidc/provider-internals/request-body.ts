import type { IncomingMessage } from 'node:http';
import type { ParameterizedContext } from 'koa';

/**
 * The provider reads a form body from the request stream itself (lib/shared/selective_body.js:
 * `ctx.req.readable`, then `req.iterator()` checked against `ctx.request.length`): an already
 * consumed stream makes it fall back to `req.body`
 * with a warning meant for apps that put a body parser in front of it. So, once our middleware
 * has read the body (middleware/raw-form.ts), the provider is handed a request that is the
 * original in every respect (headers, socket, URL) but whose stream yields `text` afresh, with a
 * Content-Length that matches it. Relies on selective_body.js reading `ctx.req` as it finds it
 * then (readable, no encoding, its iterator, its Content-Length); tripwire:
 * test/oidc/provider-internals.test.ts ("the request-body swap: the library reads the form from ctx.req's iterator").
 */
export function replayRequestBody(ctx: ParameterizedContext, original: IncomingMessage, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  if (original.headers['content-length'] !== undefined) original.headers['content-length'] = String(bytes.length);
  // The body is one chunk: a generator yields it, without a stream (and its state) per reading.
  const chunks = async function* () {
    yield bytes;
  };
  const replay = Object.create(original, {
    readable: { value: true },
    readableEncoding: { value: null },
    iterator: { value: chunks },
    [Symbol.asyncIterator]: { value: chunks },
  }) as IncomingMessage;
  ctx.req = replay;
  ctx.request.req = replay;
  ctx.response.req = replay;
}
