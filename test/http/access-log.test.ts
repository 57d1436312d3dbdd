import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { writeAccessLine } from '../../src/http/access-log.js';
import { beginRequestId } from '../../src/http/request-id.js';
import { captureLogs } from '../helpers/log-capture.js';

/** The request id and the access line as the main app's request frame runs them, on a real logger. */
function app(level: string) {
  const capture = captureLogs(level);
  const child = vi.spyOn(capture.logger, 'child');
  const koa = new Koa();
  koa.use(async (ctx, next) => {
    beginRequestId(ctx, capture.logger);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      writeAccessLine(ctx, started, capture.logger);
    }
  });
  koa.use((ctx) => {
    ctx.body = 'ok';
  });
  return { server: koa.callback(), capture, child };
}

describe('the access line', () => {
  it('at a level that writes no access line, no per-request logger is made, and the request id is still answered', async () => {
    const { server, capture, child } = app('warn');
    for (let i = 0; i < 3; i += 1) {
      const res = await request(server).get('/v1/donations').expect(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(child).not.toHaveBeenCalled();
    expect(capture.chunks).toEqual([]);
  });

  it('at info, one line per request, carrying the id the response gave', async () => {
    const { server, capture, child } = app('info');
    const res = await request(server).get('/v1/donations').expect(200);
    expect(child).toHaveBeenCalledTimes(1);
    const [line] = capture.records();
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/v1/donations', status: 200, req_id: res.headers['x-request-id'] });
    expect(capture.records()).toHaveLength(1);
  });
});
