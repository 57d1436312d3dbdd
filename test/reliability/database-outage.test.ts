import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createDatabase, type Db } from '../../src/db/database.js';
import { openEmbeddedPostgres, type EmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { HOSTS, tempDir, testApp, type TestApp } from '../helpers/app.js';
import { basic } from '../helpers/flow.js';
import { checkGatewayResponse } from '../helpers/published-openapi.js';

/** An embedded PostgreSQL of this test's own, so stopping it affects nothing else. */
let dataDir: string;
let postgres: EmbeddedPostgres;
let db: Db;
let test: TestApp;
let key: string;

beforeAll(async () => {
  dataDir = tempDir('almoner-outage-');
  postgres = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always' });
  db = createDatabase({ url: postgres.url, poolMax: 4 });
  await migrateToLatest(db);
  await addOrganization(db, { ein: '55-0000001', name: 'Outage Nonprofit' });
  key = (await createApiKey(db, { org: '55-0000001', environment: 'production' })).key;
  test = await testApp(db);
});
afterAll(async () => {
  await test?.runtime.stop();
  await db?.destroy();
  await postgres?.release();
});

/** A gateway call, checked against its published operation like every gateway response. */
async function listGrants(app: ReturnType<TestApp['app']['callback']>) {
  const res = await request(app).get('/v1/grants').set('Host', HOSTS.api).set('Authorization', `Bearer ${key}`);
  checkGatewayResponse({ method: 'GET', path: '/v1/grants', status: res.status, contentType: res.headers['content-type'], text: res.text });
  return res;
}

describe('database outage', () => {
  it('answers 503 problems with Retry-After while Postgres is down, never a 500, and recovers by itself', async () => {
    const app = test.app.callback();
    expect((await request(app).get('/readyz').set('Host', HOSTS.api)).status).toBe(200);
    expect((await listGrants(app)).status).toBe(200);

    await postgres.release(); // stops PostgreSQL: this test is its only user
    const ready = await request(app).get('/readyz').set('Host', HOSTS.api);
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    const api = await listGrants(app);
    expect(api.status).toBe(503);
    expect(api.headers['content-type']).toMatch(/problem\+json/);
    expect(api.headers['retry-after']).toBe('5');
    const token = await request(app)
      .post('/auth/oauth/token')
      .set('Host', HOSTS.api)
      .set('Authorization', basic('live_someclient123', 'secret'))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x' });
    expect(token.status).toBe(503);
    expect(token.headers['retry-after']).toBe('5');
    expect((await request(app).get('/healthz').set('Host', HOSTS.api)).status).toBe(200);

    postgres = await openEmbeddedPostgres({ dataDir, stopWhenUnused: 'always' });
    const started = Date.now();
    let status = 0;
    while (Date.now() - started < 5000) {
      status = (await request(app).get('/readyz').set('Host', HOSTS.api)).status;
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect((await listGrants(app)).status).toBe(200);
  });
});
