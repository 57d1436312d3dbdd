import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { AddressSet } from '../../src/http/client-address.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { metricsEndpoint } from '../../src/metrics/endpoint.js';

/**
 * A scrape that cannot be collected (with ALMONER_WORKERS, one that meets a dying worker or a
 * primary that does not answer in time: metrics/cluster.ts) is a 503 with Retry-After, the
 * error vocabulary's `unavailable`, never a 500.
 */

function appScraping(scrape: () => Promise<string>) {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    ctx.state.clientIp = '127.0.0.1';
    ctx.state.clientIpKnown = true;
    await next();
  });
  app.use(errorHandler());
  app.use(metricsEndpoint({ scrape, contentType: 'text/plain; version=0.0.4; charset=utf-8' }, new AddressSet(['127.0.0.0/8'])));
  return app.callback();
}

describe('GET /metrics when the metrics cannot be collected', () => {
  it('answers 503 with Retry-After and the reason', async () => {
    const res = await request(appScraping(() => Promise.reject(new Error('cluster metrics: the primary did not answer in time')))).get(
      '/metrics',
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toMatchObject({
      status: 503,
      code: 'unavailable',
      detail: expect.stringContaining('the primary did not answer in time'),
    });
  });

  it('answers 200 with the exposition when they can', async () => {
    const res = await request(appScraping(() => Promise.resolve('# HELP x y\n'))).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toBe('# HELP x y\n');
  });
});
