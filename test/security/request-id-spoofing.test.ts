/**
 * Attack: a caller sends its own X-Request-Id (another request's id, text that forges log
 * structure, a huge value) so that our logs, audit rows and error pages correlate on what it
 * chose, or collide with someone else's request.
 * Protection: an incoming id is kept only from a trusted proxy (ALMONER_TRUSTED_PROXIES) and
 * only if it is 1-64 characters of [A-Za-z0-9._:-]; otherwise the server generates one
 * (src/http/request-id.ts). The response header and the access log line carry the same id.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { captureLogs } from '../helpers/log-capture.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';

const GENERATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestDatabase;
let direct: OAuthTestServer;
let proxied: OAuthTestServer;
const directLog = captureLogs('debug');
const proxiedLog = captureLogs('debug');

beforeAll(async () => {
  t = await createTestDatabase();
  direct = await startOAuthServer(t.db, {}, directLog.logger);
  proxied = await startOAuthServer(
    t.db,
    { trusted_proxies: ['127.0.0.1/32'], clients_file: direct.config.clients_file },
    proxiedLog.logger,
  );
});
afterAll(async () => {
  await direct?.close();
  await proxied?.close();
  await t?.drop();
});

/** A request carrying raw header lines exactly as written (bytes a client library would refuse). */
function rawGet(base: string, path: string, headerLines: string[]): Promise<{ status: number; requestId: string | undefined }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(
        Buffer.from([`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close', ...headerLines, '', ''].join('\r\n'), 'latin1'),
      );
    });
    let response = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (response += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const head = response.split('\r\n\r\n')[0]!;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      resolve({ status, requestId: /\r\nx-request-id: ([^\r\n]*)/i.exec(head)?.[1] });
    });
  });
}

/** The access log line of the request that was answered with `id`; and no line names `sent`. */
function expectLogged(lines: Record<string, unknown>[], id: string, path: string, sent?: string) {
  const access = lines.filter((l) => l.msg === 'request' && l.path === path);
  expect(access.some((l) => l.req_id === id)).toBe(true);
  if (sent !== undefined && sent !== id) expect(lines.some((l) => JSON.stringify(l).includes(sent))).toBe(false);
}

describe('X-Request-Id', () => {
  it('from a caller that is not a trusted proxy is replaced, however well formed', async () => {
    const sent = 'lb-victim-request-0001';
    const res = await rawGet(direct.urls.api, '/direct-1', [`X-Request-Id: ${sent}`]);
    expect(res.status).toBe(404);
    expect(res.requestId).toMatch(GENERATED);
    expectLogged(directLog.records(), res.requestId!, '/direct-1', sent);
  });

  it('from a trusted proxy is kept when well formed (up to 64 characters of A-Z a-z 0-9 . _ : -)', async () => {
    for (const [i, sent] of ['lb-1234567890abcdef', 'a', 'Root:1-67891233-abcdef012345678912345678', 'x'.repeat(64)].entries()) {
      const res = await rawGet(proxied.urls.api, `/kept-${i}`, [`X-Request-Id: ${sent}`]);
      expect(res.requestId).toBe(sent);
      expectLogged(proxiedLog.records(), sent, `/kept-${i}`);
    }
  });

  it.each([
    ['CRLF-ish (percent-encoded)', ['X-Request-Id: abc%0d%0a{"level":60}']],
    ['a log-forging JSON fragment', ['X-Request-Id: abc","msg":"forged']],
    ['spaces', ['X-Request-Id: bad id with spaces']],
    ['a tab', ['X-Request-Id: bad\tid']],
    ['65 characters', [`X-Request-Id: ${'y'.repeat(65)}`]],
    ['non-ASCII bytes', ['X-Request-Id: caf\xe9-\xff']],
    ['two header lines', ['X-Request-Id: first-id', 'X-Request-Id: second-id']],
    ['an empty value', ['X-Request-Id: ']],
  ])('from a trusted proxy is replaced when malformed: %s', async (form, lines) => {
    const path = `/malformed-${form.replace(/\W+/g, '-')}`;
    const res = await rawGet(proxied.urls.api, path, lines);
    expect(res.status).toBe(404);
    expect(res.requestId).toMatch(GENERATED);
    const sent = lines[0]!.slice('X-Request-Id: '.length);
    expectLogged(proxiedLog.records(), res.requestId!, path, sent || undefined);
  });

  it('is replaced on the token endpoint too, where the provider reads it back for audit rows', async () => {
    const sent = 'chosen-by-the-caller';
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(
        `${direct.urls.api}/auth/oauth/token`,
        { method: 'POST', headers: { 'x-request-id': sent, 'content-type': 'application/x-www-form-urlencoded' } },
        resolve,
      );
      req.on('error', reject);
      req.end('grant_type=refresh_token&refresh_token=x');
    });
    res.resume();
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-request-id']).toMatch(GENERATED);
  });
});
