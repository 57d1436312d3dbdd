import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { basic } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Two Authorization headers in one request (docs/security.md, "Two credentials in one
 * request"): Node keeps the first and drops the rest, so the credential that counts would be
 * whichever a client or proxy wrote first. Refused with 400 at the gateway and at the
 * client-authenticated OAuth endpoints, whatever the headers hold.
 */
const {
  testDatabase: t,
  server,
  staff,
  clients: { client, other },
} = useOAuthServer({ clients: { client: { environment: 'production' }, other: { environment: 'production' } } });
let key = '';

beforeAll(async () => {
  key = (await createApiKey(t.db, { org: staff.ein, environment: 'production' })).key;
});

/** One request with every value of `authorization` as a header line of its own. */
function send(
  method: string,
  path: string,
  authorization: string[],
  body?: string,
): Promise<{ status: number; body: Record<string, unknown>; type: string | undefined }> {
  const url = new URL(path, server.urls.api);
  // Node's types allow one Authorization value; given an array, it writes a header line for each.
  const headers: http.OutgoingHttpHeaders = {
    authorization: authorization as unknown as string,
    ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          type: res.headers['content-type'],
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('two Authorization headers', () => {
  it('the gateway answers 400 invalid, even when both are the same valid API key; one header still works', async () => {
    expect((await send('GET', '/v1/grants', [`Bearer ${key}`])).status).toBe(200);
    for (const pair of [
      [`Bearer ${key}`, `Bearer ${key}`],
      [`Bearer ${key}`, 'Bearer alm_live_someoneelse'],
      ['Bearer alm_live_someoneelse', `Bearer ${key}`],
    ]) {
      const answer = await send('GET', '/v1/grants', pair);
      expect(answer.status).toBe(400);
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ code: 'invalid', detail: 'The request carries 2 Authorization headers: send exactly one.' });
    }
  });

  it('the token, introspection and revocation endpoints answer 400 invalid_request', async () => {
    const mine = basic(client.client_id, client.client_secret);
    const theirs = basic(other.client_id, other.client_secret);
    for (const path of ['/auth/oauth/token', '/auth/oauth/introspect', '/auth/oauth/revoke']) {
      const body = path === '/auth/oauth/token' ? 'grant_type=client_credentials&scope=read_only' : 'token=abc';
      const answer = await send('POST', path, [mine, theirs], body);
      expect(answer.status, path).toBe(400);
      expect(answer.body, path).toEqual({ error: 'invalid_request', error_description: 'the Authorization header must be sent once' });
    }
  });
});
