import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AppConfig } from '../config/schema.js';

export interface ListenAddress {
  host: string;
  port: number;
}

/** ALMONER_LISTEN when given; otherwise one listener per distinct port of the four public URLs. */
export function listenAddresses(config: Pick<AppConfig, 'listen' | 'base_url' | 'sandbox_base_url' | 'dashboard_url' | 'sandbox_dashboard_url'>): ListenAddress[] {
  if (config.listen && config.listen.length > 0) return config.listen.map(parseListenAddress);
  const byPort = new Map<number, string>();
  for (const origin of [config.base_url, config.sandbox_base_url, config.dashboard_url, config.sandbox_dashboard_url]) {
    const { host: bind, port } = bindAddressOf(origin);
    const previous = byPort.get(port);
    byPort.set(port, previous && previous !== bind ? '0.0.0.0' : bind);
  }
  return [...byPort].map(([port, host]) => ({ host, port }));
}

/** Where a public URL is served: a loopback or literal address is bound as such, a DNS name on all interfaces. */
export function bindAddressOf(origin: string): ListenAddress {
  const url = new URL(origin);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host: net.isIP(hostname) !== 0 || hostname === 'localhost' ? hostname : '0.0.0.0', port };
}

/** A validated host:port setting ([::1]:9100 style for IPv6). */
export function parseListenAddress(entry: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(entry)!;
  return { host: match[1] ?? match[2]!, port: Number(match[3]) };
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
      throw new Error(`${setting}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  };
  return { cert: read(config.tls_cert, 'ALMONER_TLS_CERT'), key: read(config.tls_key, 'ALMONER_TLS_KEY') };
}

export async function listen(address: ListenAddress, handler: http.RequestListener, tls: TlsMaterial | undefined): Promise<http.Server> {
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${address.host}:${address.port}`;
      if (error.code === 'EADDRINUSE') reject(new Error(`cannot listen on ${where}: the port is already in use (is another Almoner running?)`));
      else if (error.code === 'EACCES') reject(new Error(`cannot listen on ${where}: permission denied (ports below 1024 need privileges; set ALMONER_LISTEN)`));
      else reject(new Error(`cannot listen on ${where}: ${error.message}`));
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
