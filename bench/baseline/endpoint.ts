import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import pg from 'pg';

/**
 * What the bare Koa + pg baseline endpoints share (docs/benchmarks.md): their pool, a
 * transaction, a JSON body, ids shaped as Almoner's, and serving until SIGTERM. Each endpoint
 * keeps only the rows and queries of the operation it stands beside.
 *
 * Environment: PORT (0, the default: an ephemeral one), DATABASE_URL, POOL_MAX (default 10,
 * Almoner's database_pool_max).
 */

export const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  application_name: 'almoner-bench-baseline',
});

export async function inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
/** Ids shaped as Almoner's (prefix_ulid), so the rows are the same size. */
export function prefixedId(prefix: string): string {
  let out = '';
  let t = Date.now();
  for (let i = 0; i < 10; i += 1) {
    out = CROCKFORD[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  for (const byte of crypto.randomBytes(16)) out += CROCKFORD[byte % 32];
  return `${prefix}_${out}`;
}

export async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Listens on 127.0.0.1:PORT, prints {"ready": true, "port"}, and closes the server and the pool on SIGTERM. */
export async function serve(app: Koa): Promise<void> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`);
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void pool.end().then(() => process.exit(0)));
  });
}
