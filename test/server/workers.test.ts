import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESTART_BACKOFF_MS, RESTART_BACKOFF_MS, restartDelay } from '../../src/server/workers.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  isAlive,
  livePostmaster,
  makeDataDir,
  removeDataDir,
  request,
  sleep,
  startServer,
  waitForPostgresStopped,
  waitUntil,
  type ServerProcess,
} from '../helpers/process.js';
import { parseExposition, total } from '../metrics/exposition.js';

/**
 * ALMONER_WORKERS=2: a primary and two workers sharing the listeners (src/server/workers.ts).
 * Which worker served a connection is read from /proc (the process holding the server side
 * of the TCP connection), so nothing new is exposed over HTTP for it.
 */

let t: TestDatabase;
let dataDir: string;
let embeddedDataDir: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
  embeddedDataDir = makeDataDir();
});

afterAll(async () => {
  await server?.kill();
  await removeDataDir(dataDir);
  await removeDataDir(embeddedDataDir);
  await t?.drop();
});

/** The server processes a primary forked: its children running src/main.ts (tsx's esbuild service is a child too). */
function workerPids(primary: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== primary || !isAlive(Number(entry))) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('src/main.ts')) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

/** The socket inode of the server side of the TCP connection from `clientPort` to `serverPort` (IPv4 loopback). */
function serverSideInode(serverPort: number, clientPort: number): string | undefined {
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const local = parseInt(fields[1]!.split(':')[1]!, 16);
    const remote = parseInt(fields[2]!.split(':')[1]!, 16);
    if (local === serverPort && remote === clientPort) return fields[9];
  }
  return undefined;
}

/** Which of `pids` holds the socket with this inode. */
function ownerOf(inode: string, pids: number[]): number | undefined {
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/**
 * `count` GET requests, all at once, each on a keep-alive connection of its own; returns, for
 * each, the worker holding the server side of its connection (read while the connections stay open).
 */
async function servedBy(url: string, count: number, pids: number[]): Promise<(number | undefined)[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: count });
  const target = new URL(url);
  try {
    const ports = await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            const req = http.get(url, { agent, timeout: 10_000 }, (res) => {
              const port = res.socket.localPort!;
              res.resume();
              res.on('end', () => (res.statusCode === 200 ? resolve(port) : reject(new Error(`GET ${url}: ${res.statusCode}`))));
            });
            req.on('error', reject);
          }),
      ),
    );
    return ports.map((port) => {
      const inode = serverSideInode(Number(target.port), port);
      return inode ? ownerOf(inode, pids) : undefined;
    });
  } finally {
    agent.destroy();
  }
}

async function healthzCount(url: string): Promise<number> {
  const res = await request(`${url}/metrics`);
  expect(res.status, res.body).toBe(200);
  const { samples } = parseExposition(res.body);
  return total(samples, 'almoner_http_request_duration_seconds_count', { route: '/healthz' }) ?? 0;
}

describe('ALMONER_WORKERS=2', () => {
  it('serves from two worker processes, sums /metrics over them, replaces a killed worker and stops every process on SIGTERM', async () => {
    server = await startServer({
      env: { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_WORKERS: '2', ALMONER_DEMO_DATA: 'false' },
    });
    const primary = server.pid;
    const pids = workerPids(primary);
    expect(pids, server.output()).toHaveLength(2);
    expect(pids).not.toContain(primary);

    // Requests land on both workers (round robin by the primary), none on the primary itself.
    const api = server.urls.api;
    const owners = await servedBy(`${api}/healthz`, 8, [primary, ...pids]);
    expect(
      owners.every((pid) => pid !== undefined && pids.includes(pid)),
      `owners ${JSON.stringify(owners)} of workers ${JSON.stringify(pids)}`,
    ).toBe(true);
    expect(new Set(owners).size, `owners ${JSON.stringify(owners)}`).toBe(2);

    // /metrics, whichever worker answers it, counts the requests both workers served.
    const served = 8 + 6;
    for (let i = 0; i < 6; i++) expect((await request(`${api}/healthz`)).status).toBe(200);
    for (let scrape = 0; scrape < 4; scrape++) expect(await healthzCount(api)).toBe(served);

    // A killed worker is replaced; the server keeps serving meanwhile: requests sent all along,
    // some of them handed to the replacement before its app exists, are all answered 200
    // (from when the primary knows of the death: connections the dead worker held are lost).
    process.kill(pids[0]!, 'SIGKILL');
    await waitUntil(
      'the worker death in the log',
      () => (server!.stdout + server!.stderr).includes('worker died; starting a replacement'),
      5_000,
    );
    let replacing = true;
    const statuses: number[] = [];
    const meanwhile = (async () => {
      while (replacing) {
        const batch = await Promise.all(
          Array.from({ length: 4 }, () =>
            request(`${api}/healthz`, { timeoutMs: 20_000 }).then(
              (res) => res.status,
              () => 0,
            ),
          ),
        );
        statuses.push(...batch);
        await sleep(25);
      }
    })();
    try {
      await waitUntil(
        'a replacement worker',
        () => {
          const now = workerPids(primary);
          return now.length === 2 && !now.includes(pids[0]!);
        },
        20_000,
      );
      expect(server.running).toBe(true);
      await waitUntil(
        'the replacement to serve',
        async () => {
          const owners = await servedBy(`${api}/healthz`, 4, workerPids(primary));
          return new Set(owners).size === 2;
        },
        20_000,
        250,
      );
    } finally {
      replacing = false;
      await meanwhile;
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(
      statuses.filter((status) => status !== 200),
      `statuses while replacing: ${statuses.join(',')}`,
    ).toEqual([]);
    const replaced = workerPids(primary);
    expect(replaced).toContain(pids[1]);

    // SIGTERM to the primary stops every worker, then the primary, with exit 0; a request in
    // flight when the signal comes (its body still arriving) is answered first.
    const target = new URL(api);
    const slow = net.connect(Number(target.port), target.hostname);
    await new Promise((resolve, reject) => slow.once('connect', resolve).once('error', reject));
    let answer = '';
    slow.setEncoding('utf8').on('data', (text: string) => (answer += text));
    slow.on('error', () => undefined);
    const body = 'grant_type=client_credentials&client_id=test_nobody&client_secret=wrong';
    slow.write(
      `POST /auth/oauth/token HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 12)}`,
    );
    await sleep(500);
    const stopping = server.stop('SIGTERM', 30_000);
    await sleep(1_000);
    expect(server.running, 'the primary waits for the request in flight').toBe(true);
    slow.write(body.slice(12));
    await waitUntil('the answer to the request in flight', () => answer.includes('\r\n\r\n'), 10_000);
    expect(answer, answer).toMatch(/^HTTP\/1\.1 4\d\d /);
    slow.destroy();
    const status = await stopping;
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    for (const pid of replaced) expect(isAlive(pid), `worker ${pid} left running`).toBe(false);
  }, 120_000);
});

describe('ALMONER_WORKERS=2 with the embedded PostgreSQL', () => {
  it('starts the embedded PostgreSQL in the primary alone, hands the workers its URL, and stops it after them', async () => {
    server = await startServer({ env: { ALMONER_DATA_DIR: embeddedDataDir, ALMONER_WORKERS: '2' } });
    const postmaster = livePostmaster(embeddedDataDir);
    expect(postmaster, server.output()).toBeDefined();
    const pids = workerPids(server.pid);
    expect(pids).toHaveLength(2);
    for (const pid of pids) {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(
        environ.some((entry) => entry.startsWith('DATABASE_URL=postgres')),
        `worker ${pid} has the database URL`,
      ).toBe(true);
    }
    expect((await request(`${server.urls.api}/readyz`)).status).toBe(200);
    // The postmaster is the primary's: the workers only connect to it.
    const postmasterParent = Number(fs.readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    expect(pids).not.toContain(postmasterParent);
    expect(server.stdout.match(/Almoner is running/g) ?? [], 'the dev banner, once').toHaveLength(1);

    expect(await server.stop('SIGTERM', 30_000), server.output()).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(isAlive(pid), `worker ${pid} left running`).toBe(false);
    await waitForPostgresStopped(embeddedDataDir);
  }, 120_000);
});

describe('replacing dead workers', () => {
  it('waits longer the more workers died within the last minute, up to a ceiling', () => {
    expect(restartDelay(1)).toBe(RESTART_BACKOFF_MS);
    expect(restartDelay(2)).toBe(2 * RESTART_BACKOFF_MS);
    expect(restartDelay(4)).toBe(8 * RESTART_BACKOFF_MS);
    expect(restartDelay(50)).toBe(MAX_RESTART_BACKOFF_MS);
  });
});
