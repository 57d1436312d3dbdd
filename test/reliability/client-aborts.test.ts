import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { basic } from '../helpers/flow.js';
import { captureLogs } from '../helpers/log-capture.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Callers that hang up mid-body (docs/operations.md, "HTTP conventions"): a request whose Content-Length
 * promises more than the caller sends before it destroys its connection. That is the caller
 * leaving, not the database failing: no 503 in the access log or the metrics, no error or
 * warning line, no stack; the access log and the metrics say 499 and a debug line says why.
 */
const logs = captureLogs('debug');
const {
  testDatabase: t,
  server,
  clients: { client },
} = useOAuthServer({ logger: logs.logger, clients: { client: { environment: 'production' } } });
let fundKey = '';

beforeAll(async () => {
  await addOrganization(t.db, { ein: '98-4040404', name: 'Abort Fund', kind: 'fund_provider' });
  fundKey = (await createApiKey(t.db, { org: '98-4040404', environment: 'production' })).key;
});

/**
 * Sends `POST path` with a Content-Length of `declared` bytes and only `body`, waits until the
 * server is reading the rest, then destroys the connection.
 */
function abortedRequest(path: string, headers: Record<string, string>, body: string, declared: number): Promise<void> {
  const { hostname, port, host } = new URL(server.urls.api);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        `Host: ${host}`,
        `Content-Length: ${declared}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        '',
        '',
      ].join('\r\n');
      socket.write(head + body, () => setTimeout(() => socket.destroy(), 150));
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

const requestLines = (path: string) => logs.records().filter((r) => r.msg === 'request' && r.path === path);

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const started = Date.now();
  while (!check() && Date.now() - started < ms) await new Promise((resolve) => setTimeout(resolve, 50));
}

async function statusCounts(route: string): Promise<Record<string, number>> {
  const metric = await server.runtime.metrics.requestDuration.get();
  const counts: Record<string, number> = {};
  for (const value of metric.values) {
    if (value.metricName?.endsWith('_count') && value.labels.route === route)
      counts[String(value.labels.status)] = (counts[String(value.labels.status)] ?? 0) + value.value;
  }
  return counts;
}

describe('client aborts', () => {
  it('20 aborted bodies at the token endpoint and 20 at a /v1 route: 499 in the access log and metrics, no 503, no error or warning line', async () => {
    const before = logs.records().length;
    const tokenBody = 'grant_type=refresh_token&refresh_token=';
    const jsonBody = '{"donor": {"email": "ab';
    await Promise.all(
      Array.from({ length: 20 }, () =>
        abortedRequest(
          '/auth/oauth/token',
          { authorization: basic(client.client_id, client.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
          tokenBody,
          tokenBody.length + 200,
        ),
      ),
    );
    await Promise.all(
      Array.from({ length: 20 }, () =>
        abortedRequest(
          '/v1/donor_accounts',
          { authorization: `Bearer ${fundKey}`, 'content-type': 'application/json', 'api-version': '2026-04-01' },
          jsonBody,
          jsonBody.length + 200,
        ),
      ),
    );
    await until(() => requestLines('/auth/oauth/token').length >= 20 && requestLines('/v1/donor_accounts').length >= 20);

    const token = requestLines('/auth/oauth/token');
    const gateway = requestLines('/v1/donor_accounts');
    expect(token.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 499));
    expect(gateway.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 499));

    // Nothing at warn (40) or above: no "database unavailable", no "oidc provider error", no stack.
    const during = logs.records().slice(before);
    expect(during.filter((r) => Number(r.level) >= 40).map((r) => `${String(r.level)} ${String(r.msg)}`)).toEqual([]);
    expect(JSON.stringify(during)).not.toMatch(/"stack"/);
    // At least one each (Koa reports a provider request's failure again when its response ends).
    expect(during.filter((r) => r.msg === 'client closed the request').length).toBeGreaterThanOrEqual(40);

    const tokenCounts = await statusCounts('/auth/oauth/token');
    const gatewayCounts = await statusCounts('/v1/donor_accounts');
    expect(tokenCounts['503'] ?? 0).toBe(0);
    expect(gatewayCounts['503'] ?? 0).toBe(0);
    expect(tokenCounts['499']).toBe(20);
    expect(gatewayCounts['499']).toBe(20);
  }, 60_000);
});
