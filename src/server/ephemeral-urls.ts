import type http from 'node:http';
import type net from 'node:net';
import { hasEphemeralPort, PUBLIC_URL_KEYS, type AppConfig } from '../config/schema.js';
import { bindAddressOf, listen, type TlsMaterial } from './listeners.js';

/**
 * Public URLs with port 0 (e.g. ALMONER_BASE_URL=http://127.0.0.1:0) are bound first, each on
 * an ephemeral port of its own, and the configuration is rebuilt with the bound ports before
 * anything reads it (issuers, host dispatch, banner). A launcher that looks up a free port and
 * passes it on cannot promise that nobody takes the port in between; this can.
 */
export interface EphemeralBinding {
  /** The configuration with every port-0 URL replaced by the URL actually bound. */
  config: AppConfig;
  servers: http.Server[];
  /** Ports bound here, which the regular listeners must not bind again. */
  ports: ReadonlySet<number>;
  /** Hands the listeners the app once it exists; until then they answer 503. */
  attach(handler: http.RequestListener): void;
}

/** Nobody knows these ports before the configuration is built, but a stray request still gets an answer. */
const starting: http.RequestListener = (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The server is starting.' }));
};

export async function bindEphemeralUrls(config: AppConfig, tls: TlsMaterial | undefined): Promise<EphemeralBinding> {
  let current = starting;
  const handler: http.RequestListener = (req, res) => current(req, res);
  const servers: http.Server[] = [];
  const resolved: Partial<Record<(typeof PUBLIC_URL_KEYS)[number], string>> = {};
  try {
    for (const key of PUBLIC_URL_KEYS) {
      if (!hasEphemeralPort(config[key])) continue;
      const server = await listen(bindAddressOf(config[key]), handler, tls);
      servers.push(server);
      const url = new URL(config[key]);
      url.port = String((server.address() as net.AddressInfo).port);
      resolved[key] = url.origin;
    }
  } catch (error) {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    throw error;
  }
  return {
    config: servers.length === 0 ? config : Object.freeze({ ...config, ...resolved }),
    servers,
    ports: new Set(servers.map((server) => (server.address() as net.AddressInfo).port)),
    attach(app) {
      current = app;
    },
  };
}
