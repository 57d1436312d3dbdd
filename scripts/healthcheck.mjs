/**
 * The image's HEALTHCHECK (docs/operations.md, "Health checks: /healthz and /readyz"): asks
 * /healthz on loopback, on the port of ALMONER_LISTEN, in the scheme the process serves there:
 * HTTPS when it terminates TLS itself (ALMONER_TLS_CERT), plain HTTP otherwise (behind a proxy,
 * loopback health checks are the plain-HTTP requests the production profile answers). Exits 0
 * on a 200, 1 on anything else. Plain JavaScript: the image runs the build, without tsx.
 */
import http from 'node:http';
import https from 'node:https';

const TIMEOUT_MS = 2_500;

/**
 * The first ALMONER_LISTEN address, reached on loopback when it is a wildcard one.
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ host: string, port: number } | undefined}
 */
function target(env) {
  const first = (env.ALMONER_LISTEN ?? '0.0.0.0:8080').split(',')[0]?.trim() ?? '';
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(first);
  if (!match) return undefined;
  const host = match[1] ?? match[2] ?? '';
  const loopback = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return { host: loopback, port: Number(match[3]) };
}

const env = process.env;
const where = target(env);
if (!where) {
  process.stderr.write(`healthcheck: ALMONER_LISTEN is not host:port (${env.ALMONER_LISTEN})\n`);
  process.exit(1);
}
const tls = Boolean(env.ALMONER_TLS_CERT);
const client = tls ? https : http;
const request = client.get({
  host: where.host,
  port: where.port,
  path: '/healthz',
  timeout: TIMEOUT_MS,
  // The process's own certificate, asked over loopback: it names the public hosts, not
  // 127.0.0.1, and what is checked is that the process answers.
  ...(tls ? { rejectUnauthorized: false } : {}),
});
request.on('response', (response) => {
  response.resume();
  process.exit(response.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
request.on('error', (error) => {
  process.stderr.write(
    `healthcheck: ${tls ? 'https' : 'http'}://${where.host.includes(':') ? `[${where.host}]` : where.host}:${where.port}/healthz: ${error.message}\n`,
  );
  process.exit(1);
});
