import type http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bindAddressOf,
  closeServers,
  listen,
  listenAddresses,
  parseListenAddress,
  type ListenOptions,
} from '../../src/server/listeners.js';
import { checkPortsFree } from '../../src/server/port-check.js';

/**
 * Which addresses the four public URLs are served on. The spawned-server tests all use port 0
 * now, so this is where `npm start`'s fixed ports (3000-3003 in dev) are checked.
 */

const urls = (base_url: string, sandbox_base_url: string, dashboard_url: string, sandbox_dashboard_url: string) => ({
  base_url,
  sandbox_base_url,
  dashboard_url,
  sandbox_dashboard_url,
});

describe('listen addresses', () => {
  it('follow from the four URLs: the dev defaults are four loopback ports', () => {
    expect(
      listenAddresses(urls('http://127.0.0.1:3000', 'http://127.0.0.1:3001', 'http://127.0.0.1:3002', 'http://127.0.0.1:3003')),
    ).toEqual([
      { host: '127.0.0.1', port: 3000, settings: ['ALMONER_BASE_URL'] },
      { host: '127.0.0.1', port: 3001, settings: ['ALMONER_SANDBOX_BASE_URL'] },
      { host: '127.0.0.1', port: 3002, settings: ['ALMONER_DASHBOARD_URL'] },
      { host: '127.0.0.1', port: 3003, settings: ['ALMONER_SANDBOX_DASHBOARD_URL'] },
    ]);
  });

  it('bind a DNS name on all interfaces, default ports by scheme, one listener per shared port', () => {
    expect(
      listenAddresses(
        urls('https://api.example.org', 'https://api.sandbox.example.org', 'https://dashboard.example.org', 'http://[::1]:8080'),
      ),
    ).toEqual([
      { host: '0.0.0.0', port: 443, settings: ['ALMONER_BASE_URL', 'ALMONER_SANDBOX_BASE_URL', 'ALMONER_DASHBOARD_URL'] },
      { host: '::1', port: 8080, settings: ['ALMONER_SANDBOX_DASHBOARD_URL'] },
    ]);
    expect(bindAddressOf('http://localhost:0')).toEqual({ host: 'localhost', port: 0 });
  });

  it('are those of listen when it is set', () => {
    expect(
      listenAddresses({
        ...urls('https://a.example', 'https://b.example', 'https://c.example', 'https://d.example'),
        listen: ['0.0.0.0:8080', '[::]:8443'],
      }),
    ).toEqual([
      { host: '0.0.0.0', port: 8080, settings: ['ALMONER_LISTEN'] },
      { host: '::', port: 8443, settings: ['ALMONER_LISTEN'] },
    ]);
  });
});

const started: http.Server[] = [];
afterEach(async () => {
  await closeServers(started.splice(0), 0);
});

/** A listener on a free loopback port; its handler reads the whole body before answering. */
async function server(options: ListenOptions = {}): Promise<{ port: number }> {
  const listener = await listen(
    { host: '127.0.0.1', port: 0 },
    (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    },
    undefined,
    options,
  );
  started.push(listener);
  return { port: (listener.address() as net.AddressInfo).port };
}

/** Opens a connection, writes `text`, and resolves with the milliseconds until the server closed it (or `waitMs`, still open). */
function heldFor(port: number, text: string, waitMs: number): Promise<{ ms: number; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const opened = Date.now();
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ms: Date.now() - opened, closed: false });
    }, waitMs);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ms: Date.now() - opened, closed: true });
    });
    socket.write(text);
  });
}

describe('slow connections', () => {
  // Node checks the timeouts every connectionsCheckingInterval (30 s by default): a sender
  // was held that long past its limit. Short limits here, the production interval.
  it('a connection whose headers never finish is cut within seconds of headersTimeout, not up to 30 s later', async () => {
    const { port } = await server({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 });
    const held = await heldFor(port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ', 15_000);
    expect(held.closed).toBe(true);
    expect(held.ms).toBeGreaterThanOrEqual(900);
    expect(held.ms).toBeLessThan(6_000);
  }, 20_000);

  it('a request whose body never finishes is cut within seconds of requestTimeout, not up to 30 s later', async () => {
    const { port } = await server({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 });
    const held = await heldFor(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nsome', 15_000);
    expect(held.closed).toBe(true);
    expect(held.ms).toBeGreaterThanOrEqual(1_900);
    expect(held.ms).toBeLessThan(7_000);
  }, 20_000);
});

describe('connections per address', () => {
  it('a burst of 20 connections from one address: 3 stay open, the rest are closed at once; a closed one frees its place', async () => {
    const { port } = await server({ connectionsPerAddress: 3, capLoopback: true });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => heldFor(port, '', 1_500)));
    expect(outcomes.filter((o) => !o.closed)).toHaveLength(3);
    expect(outcomes.filter((o) => o.closed).every((o) => o.ms < 1_000)).toBe(true);
    // The three were released when the test closed them: three more fit again, once the server
    // has seen those closes (no fixed wait: a loaded machine may take longer to deliver them).
    await expect
      .poll(async () => (await Promise.all(Array.from({ length: 3 }, () => heldFor(port, '', 500)))).every((o) => !o.closed), {
        timeout: 10_000,
        interval: 100,
      })
      .toBe(true);
  });

  it('loopback is not capped unless asked (a proxy on the same machine is loopback)', async () => {
    const { port } = await server({ connectionsPerAddress: 3 });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => heldFor(port, '', 500)));
    expect(outcomes.every((o) => !o.closed)).toBe(true);
  });
});

describe('a port already in use', () => {
  it('names the setting that moves it: the public URL (or listen), listen, metrics_listen', async () => {
    const { port } = await server();
    const [fromUrl] = listenAddresses(urls(`http://127.0.0.1:${port}`, 'http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'));
    await expect(listen(fromUrl!, () => undefined, undefined)).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port}: the port is already in use (is another Almoner running?); to serve on another port, change the port in ALMONER_BASE_URL, or set ALMONER_LISTEN`,
    );
    const [fromListen] = listenAddresses({
      ...urls('http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3', 'http://127.0.0.1:4'),
      listen: [`127.0.0.1:${port}`],
    });
    await expect(listen(fromListen!, () => undefined, undefined)).rejects.toThrow(
      /already in use .*; to serve on another port, change ALMONER_LISTEN$/,
    );
    await expect(listen(parseListenAddress(`127.0.0.1:${port}`, 'metrics_listen'), () => undefined, undefined)).rejects.toThrow(
      /already in use .*; to serve on another port, change ALMONER_METRICS_LISTEN$/,
    );
  });
});

describe('the ports checked before anything starts', () => {
  /** A port nobody holds right now (bound, then released). */
  async function freePort(): Promise<number> {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return port;
  }

  it('names every busy one at once, with the settings that move them, and leaves nothing bound', async () => {
    const [a, b] = [await server(), await server()];
    const free = [await freePort(), await freePort()];
    const config = {
      ...urls(`http://127.0.0.1:${a.port}`, `http://127.0.0.1:${free[0]}`, `http://127.0.0.1:${b.port}`, 'http://127.0.0.1:0'),
      metrics_listen: `127.0.0.1:${free[1]}`,
    };
    await expect(checkPortsFree(config)).rejects.toThrow(
      `cannot listen on 127.0.0.1:${a.port} (ALMONER_BASE_URL) and 127.0.0.1:${b.port} (ALMONER_DASHBOARD_URL): the ports are already in use (is another Almoner running?); to serve on other ports, set ALMONER_PORT_BASE (e.g. ALMONER_PORT_BASE=4000 moves the four URLs to ports 4000-4003), change the port in ALMONER_BASE_URL and ALMONER_DASHBOARD_URL or set ALMONER_LISTEN`,
    );
    await expect(checkPortsFree({ ...config, port_base: 4000 })).rejects.toThrow('choose another ALMONER_PORT_BASE (now 4000)');
    // The free ones were let go again: the real listeners can take them.
    for (const port of free) started.push(await listen({ host: '127.0.0.1', port }, () => undefined, undefined));
  });

  it('names listen and metrics_listen as theirs, and two of our own listeners that clash', async () => {
    const { port } = await server();
    const base = urls('https://a.example', 'https://b.example', 'https://c.example', 'https://d.example');
    await expect(checkPortsFree({ ...base, listen: [`127.0.0.1:${port}`] })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port} (ALMONER_LISTEN): the port is already in use (is another Almoner running?); to serve on other ports, change ALMONER_LISTEN`,
    );
    const free = await freePort();
    await expect(checkPortsFree({ ...base, listen: [`127.0.0.1:${free}`], metrics_listen: `0.0.0.0:${free}` })).rejects.toThrow(
      `cannot listen on 0.0.0.0:${free} (ALMONER_METRICS_LISTEN): the port is already in use (is another Almoner running?); to serve on other ports, change ALMONER_METRICS_LISTEN`,
    );
    await expect(checkPortsFree({ ...base, listen: [`127.0.0.1:${free}`] })).resolves.toBeUndefined();
  });
});
