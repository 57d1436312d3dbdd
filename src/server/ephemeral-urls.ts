import type http from 'node:http';
import type net from 'node:net';
import { unavailable, writeProblem } from '../http/problem.js';
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
  /** Hands the listeners the app once it exists (or `startingUp`, when the start failed); until then requests wait for it. */
  attach(handler: http.RequestListener): void;
}

/** The answer to a request that arrived before the app existed and could not wait for it. */
export const startingUp: http.RequestListener = (_req, res) => {
  // No Koa app yet, so node's own response: the same problem every other 503 is.
  writeProblem(res, unavailable('The server is starting.', 1));
};

/**
 * Until the app exists, requests wait for it rather than fail. A single process gets none (nobody
 * knows the port before the ready file), but a cluster worker's port-0 listener is the shared
 * handle: a replacement worker binds it before its app is built and node:cluster hands it
 * connections at once. Bounded in time and number; past either, the answer is a 503.
 */
const HOLD_MS = 10_000;
const HOLD_MAX = 512;

interface Held {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  timer: NodeJS.Timeout;
}

export async function bindEphemeralUrls(
  config: AppConfig,
  tls: TlsMaterial | undefined,
  hold = { ms: HOLD_MS, max: HOLD_MAX },
): Promise<EphemeralBinding> {
  let current: http.RequestListener | undefined;
  const held = new Set<Held>();
  const handler: http.RequestListener = (req, res) => {
    if (current) return current(req, res);
    if (held.size >= hold.max) return startingUp(req, res);
    const entry: Held = { req, res, timer: setTimeout(() => held.delete(entry) && startingUp(req, res), hold.ms) };
    entry.timer.unref();
    held.add(entry);
    res.once('close', () => {
      clearTimeout(entry.timer);
      held.delete(entry);
    });
  };
  const servers: http.Server[] = [];
  const resolved: Partial<Record<(typeof PUBLIC_URL_KEYS)[number], string>> = {};
  try {
    for (const key of PUBLIC_URL_KEYS) {
      if (!hasEphemeralPort(config[key])) continue;
      const server = await listen({ ...bindAddressOf(config[key]), trustedProxies: config.trusted_proxies }, handler, tls);
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
      for (const entry of held) {
        clearTimeout(entry.timer);
        held.delete(entry);
        app(entry.req, entry.res);
      }
    },
  };
}
