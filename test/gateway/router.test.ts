import Koa from 'koa';
import request from 'supertest';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/error-handler.js';
import { buildGatewayRouter } from '../../src/gateway/router.js';
import { defineRoute, type RouteSpec } from '../../src/gateway/routing/route-spec.js';
import { apiVersion } from '../../src/gateway/routing/versions.js';
import { TableMailSender } from '../../src/mail/sender.js';
import { ServerKeys } from '../../src/keys/server-keys.js';
import { testBox } from '../helpers/app.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff } from '../helpers/oauth-server.js';

let t: TestDatabase;
let key: string;
let keys: ServerKeys;
beforeAll(async () => {
  t = await createTestDatabase();
  const staff = await createStaff(t.db);
  key = (await createApiKey(t.db, { org: staff.ein, environment: 'production' })).key;
  keys = await ServerKeys.load(t.db, testBox);
});
afterAll(async () => t?.drop());

/** A gateway with one operation that exists only in 2026-04-01, like the later DAF APIs. */
function app() {
  const spec = defineRoute({
    operationId: 'newThing',
    method: 'get',
    path: '/v1/new_things',
    summary: 'added in 2026-04-01',
    tag: 'test',
    versions: ['2026-04-01'],
    area: 'test',
    access: 'read',
    credentials: 'any',
    query: z.object({}).strict(),
    response: z.object({ ok: z.boolean() }),
    errors: [401],
    handler: async () => ({ ok: true }),
  });
  const koa = new Koa();
  koa.use(errorHandler());
  koa.use(async (ctx, next) => {
    ctx.state.host = 'api';
    await next();
  });
  koa.use(apiVersion());
  koa.use(
    buildGatewayRouter([spec] as unknown as RouteSpec[], {
      db: t.db,
      ipRestrictedAreas: [],
      services: { mail: new TableMailSender(t.db), profile: 'dev', box: testBox, keys },
    }),
  );
  return koa.callback();
}

describe('versioned operations', () => {
  it('exist in the versions that list them and are 404 problems in the others, before any credential check', async () => {
    const present = await request(app()).get('/v1/new_things').set('Authorization', `Bearer ${key}`).set('Api-Version', '2026-04-01');
    expect(present.status).toBe(200);
    expect(present.body).toEqual({ ok: true });
    const absent = await request(app()).get('/v1/new_things').set('Api-Version', '2026-01-15');
    expect(absent.status).toBe(404);
    expect(absent.headers['content-type']).toMatch(/problem\+json/);
    expect(absent.body.detail).toMatch(/does not exist in API version 2026-01-15/);
  });
});
