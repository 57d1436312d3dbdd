import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { toProblem } from '../../src/http/error-handler.js';
import { createLogger, prettyFormat } from '../../src/logging/logger.js';
import { serializeError } from '../../src/logging/error-serializer.js';
import { nodeSupportNotice } from '../../src/server/node-support.js';
import { captureLogs } from '../helpers/log-capture.js';

function sink(): { text: () => string; stream: Writable } {
  const chunks: string[] = [];
  return {
    text: () => chunks.join(''),
    stream: new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    }),
  };
}

describe('logged errors', () => {
  it('an unexpected error reaching the error handler is logged with its type, message and stack', () => {
    const { records, logger } = captureLogs('info');
    class StorageFault extends Error {}
    toProblem(new StorageFault('disk quota exceeded'), logger);
    const [record] = records();
    expect(record).toMatchObject({ level: 50, msg: 'unhandled error' });
    const err = record!.err as Record<string, unknown>;
    expect(err.type).toBe('StorageFault');
    expect(err.message).toBe('disk quota exceeded');
    expect(err.stack).toMatch(/^Error: disk quota exceeded\n\s+at /);
    expect(err.stack).toContain('logger.test.ts');
  });

  it('a database outage (a refused connection: an AggregateError with no message) names the addresses refused', () => {
    const { records, logger } = captureLogs('info');
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const outage = Object.assign(new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' });
    toProblem(outage, logger);
    const err = records()[0]!.err as Record<string, unknown>;
    expect(err).toMatchObject({
      type: 'AggregateError',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect(err.stack).toMatch(/^AggregateError\b.*\n\s+at /);
  });

  it('keeps the cause chain, and none of the other properties an error carries', () => {
    const cause = new Error('socket hang up');
    const error = Object.assign(new Error('webhook send failed', { cause }), {
      detail: 'Key (email)=(someone@example.org) already exists.',
      request: { headers: { authorization: 'Bearer abc' } },
    });
    const out = serializeError(error);
    expect(out).toEqual({
      type: 'Error',
      message: 'webhook send failed',
      stack: error.stack,
      cause: { type: 'Error', message: 'socket hang up', stack: cause.stack },
    });
  });

  it('a thrown non-Error value is described by its text', () => {
    expect(serializeError('plain string')).toEqual({ type: 'string', message: "'plain string'" });
    expect(serializeError({ message: 'shaped like an error' })).toEqual({ type: 'Object', message: 'shaped like an error' });
  });
});

describe('log formats', () => {
  it('json: one JSON object a line, error stack included', () => {
    const out = sink();
    const logger = createLogger('info', out.stream, 'json');
    logger.info({ port: 3000 }, 'ready');
    logger.error({ err: new Error('boom') }, 'failed');
    const lines = out.text().trim().split('\n');
    expect(lines).toHaveLength(2);
    const [ready, failed] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(ready).toMatchObject({ msg: 'ready', port: 3000, service: 'almoner' });
    expect((failed!.err as { stack: string }).stack).toMatch(/^Error: boom\n\s+at /);
  });

  it('pretty: a readable line with level and message, the error with its stack, secrets still redacted', async () => {
    const out = sink();
    const pretty = await prettyFormat();
    expect(pretty, 'pino-pretty is installed with the dev dependencies').toBeDefined();
    const logger = createLogger('info', out.stream, pretty!);
    logger.info({ port: 3000, client_secret: 'hunter2hunter2' }, 'ready');
    logger.error({ err: new Error('boom') }, 'failed');
    const text = out.text();
    const [first] = text.split('\n');
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: ready \{"port":3000,"client_secret":"\[redacted\]"\}$/);
    expect(() => JSON.parse(first!)).toThrow();
    expect(text).toMatch(/ERROR: failed/);
    expect(text).toContain('boom');
    expect(text).toMatch(/Error: boom\n\s+at /);
    expect(text).not.toContain('hunter2hunter2');
  });
});

describe('Node.js version notice', () => {
  it('Node 20 is told it is past its end of life; 22 and 24 are not', () => {
    expect(nodeSupportNotice('20.19.0')).toMatch(/Node\.js 20\.19\.0 is past its end of life.*Node 22 or 24/);
    expect(nodeSupportNotice('22.12.0')).toBeUndefined();
    expect(nodeSupportNotice('24.1.0')).toBeUndefined();
  });
});
