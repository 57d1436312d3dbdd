import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { envNameFor, PUBLIC_URL_KEYS, type AppConfig } from '../config/schema.js';
import { AddressSet, addressKey } from '../http/client-address.js';
import { isLoopback } from '../http/health.js';

export interface ListenAddress {
  host: string;
  port: number;
  /** The settings that chose this address (environment variable names), for the errors that name them. */
  settings?: string[];
  /** The trusted proxies (trusted_proxies): their connections are not capped per address. */
  trustedProxies?: readonly string[];
}

type ListenConfig = Pick<AppConfig, 'listen' | 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'> &
  Partial<Pick<AppConfig, 'trusted_proxies'>>;

/** ALMONER_LISTEN when given; otherwise one listener per distinct port of the four public URLs. */
export function listenAddresses(config: ListenConfig): ListenAddress[] {
  const trustedProxies = config.trusted_proxies;
  if (config.listen && config.listen.length > 0)
    return config.listen.map((entry) => ({ ...parseListenAddress(entry, 'listen'), trustedProxies }));
  const byPort = new Map<number, { host: string; settings: string[] }>();
  for (const key of PUBLIC_URL_KEYS) {
    const { host: bind, port } = bindAddressOf(config[key]);
    const previous = byPort.get(port);
    byPort.set(port, {
      host: previous && previous.host !== bind ? '0.0.0.0' : bind,
      settings: [...(previous?.settings ?? []), envNameFor(key)],
    });
  }
  return [...byPort].map(([port, { host, settings }]) => ({ host, port, settings, trustedProxies }));
}

/** Where a public URL is served: a loopback or literal address is bound as such, a DNS name on all interfaces. */
export function bindAddressOf(origin: string): ListenAddress {
  const url = new URL(origin);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host: net.isIP(hostname) !== 0 || hostname === 'localhost' ? hostname : '0.0.0.0', port };
}

/** A validated host:port setting ([::1]:9100 style for IPv6); `setting` (listen, metrics_listen) is the one it came from. */
export function parseListenAddress(entry: string, setting?: 'listen' | 'metrics_listen'): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(entry)!;
  return { host: match[1] ?? match[2]!, port: Number(match[3]), ...(setting ? { settings: [envNameFor(setting)] } : {}) };
}

/** A listener that cannot be set up (port taken or forbidden, TLS files unreadable): the operator's fix, said in one line. */
export class ListenError extends Error {
  override name = 'ListenError';
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

export function readTls(config: Pick<AppConfig, 'tls_cert' | 'tls_key'>): TlsMaterial | undefined {
  if (!config.tls_cert || !config.tls_key) return undefined;
  const read = (file: string, setting: string) => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new ListenError(`${setting}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  };
  return { cert: read(config.tls_cert, 'ALMONER_TLS_CERT'), key: read(config.tls_key, 'ALMONER_TLS_KEY') };
}

/**
 * How long a connection may take (docs/operations.md, "HTTP conventions"): its headers within
 * 10 s, its whole request within 60 s. Node checks these on a timer; every second here rather
 * than its default 30 s, so a slow sender is cut within a second of its limit, not 30 s later.
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/** Open connections one caller address (IPv6 by /64) may hold at once; loopback and trusted proxies are not counted. */
export const CONNECTIONS_PER_ADDRESS = 256;

export interface ListenOptions {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  connectionsPerAddress?: number;
  /** Count loopback callers against the cap too (a proxy on the same machine is loopback, so they are not by default). */
  capLoopback?: boolean;
}

/**
 * Caps the connections one address holds open: a connection past the cap is closed as it
 * arrives. Counted as each connection is accepted and released when it closes, in one turn
 * of the event loop each, so a burst of connections cannot overshoot the cap.
 */
function capConnectionsPerAddress(server: net.Server, cap: number, exempt: (ip: string) => boolean): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: net.Socket) => {
    const ip = socket.remoteAddress ?? '';
    if (exempt(ip)) return;
    const key = addressKey(ip);
    const count = (open.get(key) ?? 0) + 1;
    if (count > cap) {
      socket.destroy();
      return;
    }
    open.set(key, count);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

/** What to change to serve on another port, for the errors of a listener that cannot bind. */
function movedBy(address: ListenAddress): string {
  const settings = address.settings ?? [];
  if (settings.length === 0)
    return 'the port comes from ALMONER_LISTEN, ALMONER_METRICS_LISTEN or the public URLs (ALMONER_BASE_URL and the like)';
  if (settings.some((s) => s.endsWith('_URL'))) return `change the port in ${settings.join(' and ')}, or set ALMONER_LISTEN`;
  return `change ${settings.join(' and ')}`;
}

export async function listen(
  address: ListenAddress,
  handler: http.RequestListener,
  tls: TlsMaterial | undefined,
  options: ListenOptions = {},
): Promise<http.Server> {
  const timing = {
    headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
    requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key, ...timing }, handler) : http.createServer(timing, handler);
  server.keepAliveTimeout = 5_000;
  const trusted = new AddressSet(address.trustedProxies ?? []);
  capConnectionsPerAddress(
    server,
    options.connectionsPerAddress ?? CONNECTIONS_PER_ADDRESS,
    (ip) => trusted.has(ip) || (!options.capLoopback && isLoopback(ip)),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${address.host}:${address.port}`;
      if (error.code === 'EADDRINUSE')
        reject(
          new ListenError(
            `cannot listen on ${where}: the port is already in use (is another Almoner running?); to serve on another port, ${movedBy(address)}`,
          ),
        );
      else if (error.code === 'EACCES')
        reject(
          new ListenError(
            `cannot listen on ${where}: permission denied (ports below 1024 need privileges); to serve on another port, ${movedBy(address)}`,
          ),
        );
      else reject(new ListenError(`cannot listen on ${where}: ${error.message}`));
    });
    server.listen(address.port, address.host, () => resolve());
  });
  return server;
}

/** Stops accepting, lets in-flight requests finish within the grace period, then cuts the rest. */
export async function closeServers(servers: readonly http.Server[], graceSeconds: number): Promise<void> {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => server.closeAllConnections(), graceSeconds * 1000);
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          server.closeIdleConnections();
        }),
    ),
  );
}
