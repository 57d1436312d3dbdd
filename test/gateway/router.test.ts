import Koa from 'koa';
import os from 'node:os';
import request from 'supertest';
import { sql } from 'kysely';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/error-handler.js';
import { notFound } from '../../src/errors/domain-error.js';
import { buildGatewayRouter } from '../../src/gateway/router.js';
import { defineRoute, type RouteSpec } from '../../src/gateway/routing/route-spec.js';
import { apiVersion } from '../../src/gateway/routing/versions.js';
import { TableMailSender } from '../../src/mail/sender.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
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
  await sql`create table router_things (name text primary key)`.execute(t.db);
});
afterAll(async () => t?.drop());

/** A gateway with one operation that exists only in 2026-04-01, like the later DAF APIs. */
function app(spec: RouteSpec = newThing()) {
  const koa = new Koa();
  koa.use(errorHandler());
  koa.use(async (ctx, next) => {
    ctx.state.host = 'api';
    await next();
  });
  koa.use(apiVersion());
  koa.use(buildGatewayRouter([spec], options()));
  return koa.callback();
}

function options() {
  return {
    db: t.db,
    ipRestrictedAreas: [],
    services: { mail: new TableMailSender(t.db), profile: 'dev' as const, box: testBox, keys, storage: new FolderStorage(os.tmpdir()) },
  };
}

/**
 * An idempotent creation that writes through its `db` and then succeeds, fails as the operation
 * (a 404 DomainError) or crashes (a 500), as its body asks.
 */
function makeThing(credentials: RouteSpec['credentials'] = 'any'): RouteSpec {
  return defineRoute({
    operationId: 'makeThing',
    method: 'post',
    path: '/v1/things',
    summary: 'test',
    tag: 'test',
    versions: ['2026-04-01'],
    area: 'test',
    access: 'write',
    credentials,
    body: z.object({ name: z.string(), then: z.enum(['ok', 'not_found', 'crash']) }).strict(),
    status: 201,
    idempotent: true,
    location: (result) => `/v1/things/${(result as { name: string }).name}`,
    response: z.object({ name: z.string() }),
    errors: [404],
    async handler({ db, body }) {
      const input = body as { name: string; then: string };
      await sql`insert into router_things (name) values (${input.name})`.execute(db);
      if (input.then === 'not_found') throw notFound('No such parent thing.');
      if (input.then === 'crash') throw new Error('the handler crashed');
      return { name: input.name };
    },
  }) as unknown as RouteSpec;
}

function newThing(): RouteSpec {
  return defineRoute({
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
  }) as unknown as RouteSpec;
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

describe('an idempotent operation (routing/idempotent.ts)', () => {
  const post = (body: object, idempotencyKey: string) =>
    request(app(makeThing())).post('/v1/things').set('Authorization', `Bearer ${key}`).set('Idempotency-Key', idempotencyKey).send(body);
  const things = async (name: string) =>
    (await sql<{ n: number }>`select count(*)::int as n from router_things where name = ${name}`.execute(t.db)).rows[0]!.n;
  const keyRow = (idempotencyKey: string) =>
    t.db.selectFrom('idempotency_keys').select(['status', 'location']).where('key', '=', idempotencyKey).executeTakeFirst();

  it("runs in the key's transaction: a success's writes and answer commit together", async () => {
    const first = await post({ name: 'one', then: 'ok' }, 'k-ok');
    expect(first.status).toBe(201);
    expect(first.headers.location).toBe('/v1/things/one');
    const again = await post({ name: 'one', then: 'ok' }, 'k-ok');
    expect([again.status, again.body, again.headers.location]).toEqual([201, { name: 'one' }, '/v1/things/one']);
    expect(await things('one')).toBe(1);
    expect(await keyRow('k-ok')).toEqual({ status: 201, location: '/v1/things/one' });
  });

  it('a DomainError 4xx of the operation undoes its writes, and is stored and replayed', async () => {
    const first = await post({ name: 'two', then: 'not_found' }, 'k-404');
    expect(first.status).toBe(404);
    expect(await things('two')).toBe(0);
    expect(await keyRow('k-404')).toEqual({ status: 404, location: null });
    const again = await post({ name: 'two', then: 'not_found' }, 'k-404');
    expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([404, first.body, 'true']);
    expect(again.headers['content-type']).toMatch(/problem\+json/);
  });

  it('a crash (500) rolls back its writes and the key: the key is free again', async () => {
    const crashed = await post({ name: 'three', then: 'crash' }, 'k-500');
    expect(crashed.status).toBe(500);
    expect(await things('three')).toBe(0);
    expect(await keyRow('k-500')).toBeUndefined();
    expect((await post({ name: 'three', then: 'ok' }, 'k-500')).status).toBe(201);
  });

  it("is refused when it is built for a client's own token, which acts for no organization", () => {
    expect(() => buildGatewayRouter([makeThing('client')], options())).toThrow(
      /makeThing: an idempotent operation needs an organization's credential/,
    );
  });
});
