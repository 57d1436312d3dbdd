/**
 * `npm run soak`: ten minutes (SOAK_SECONDS) of mixed load against a server in its own
 * process over real Postgres, then: errors (must be 0) and resident-memory growth between
 * the first and the last minute (must be under 10%). Writes bench/results/soak-<date>.json.
 *
 * The mix: gateway reads with an API key and with access tokens, refresh-token rotation
 * chains, introspection, discovery and JWKS, and health checks, from 8 concurrent workers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import * as oauth from 'oauth4webapi';
import { addOrganization, addUser } from '../src/accounts/service.js';
import { addMember } from '../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../src/accounts/passwords.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { seedNonprofitData } from '../src/demo/nonprofit-data.js';
import { createApiKey } from '../src/api-keys/service.js';
import { addClient } from '../src/oidc/clients/service.js';
import { FormBrowser } from '../test/helpers/browser.js';
import {
  buildServer,
  cleanEnv,
  EPHEMERAL_URLS,
  NodeProcess,
  PRODUCTION_ENTRY,
  PRODUCTION_NODE_ARGS,
  PRODUCTION_THREADPOOL_SIZE,
  ROOT,
  rssBytes,
} from './lib/processes.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const WORKERS = 8;
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function rssMb(pid: number): number {
  return (rssBytes(pid) ?? 0) / 1024 / 1024;
}

async function main() {
  const dbName = `almoner_soak_${Date.now()}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const db = createDatabase({ url: url.toString(), poolMax: 4 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-soak-'));
  fs.chmodSync(dir, 0o755);
  const clientsFile = path.join(dir, 'clients.json');
  let server: NodeProcess | undefined;
  try {
    await migrateToLatest(db);
    const org = await addOrganization(db, { ein: '12-3456789', name: 'Soak Food Bank' });
    const password = crypto.randomBytes(12).toString('hex');
    await addUser(db, { email: 'soak@example.org', password }, MIN_PASSWORD_PARAMS);
    await addMember(db, { org: '12-3456789', email: 'soak@example.org', role: 'member' });
    await db.transaction().execute((trx) => seedNonprofitData(trx, { organizationId: org.id, environment: 'sandbox', donations: 20_000 }));
    const redirect = 'http://127.0.0.1:9999/callback';
    const client = await addClient(
      { db, clientsFile, passwordParams: MIN_PASSWORD_PARAMS },
      { environment: 'sandbox', name: 'Soak App', redirectUris: [redirect], scopes: ['read_only', 'openid'] },
    );
    const key = (await createApiKey(db, { org: '12-3456789', environment: 'sandbox' })).key;

    // The production build with the production start command (docs/operations.md), as the benchmark runs it.
    console.log(
      `building the server (npm run build → dist/), then UV_THREADPOOL_SIZE=${PRODUCTION_THREADPOOL_SIZE} node ${PRODUCTION_NODE_ARGS.join(' ')} ${PRODUCTION_ENTRY}`,
    );
    buildServer();
    const env = cleanEnv({
      DATABASE_URL: url.toString(),
      UV_THREADPOOL_SIZE: PRODUCTION_THREADPOOL_SIZE,
      ALMONER_DATA_DIR: dir,
      ALMONER_CLIENTS_FILE: clientsFile,
      ALMONER_LOG_LEVEL: 'warn',
      ALMONER_DEMO_DATA: 'false',
      // The server binds its own ports and names them in its ready file.
      ...EPHEMERAL_URLS,
      ALMONER_READY_FILE: path.join(dir, 'ready.json'),
    });
    server = new NodeProcess(PRODUCTION_ENTRY, env, [...PRODUCTION_NODE_ARGS]);
    const { sandboxApi, sandboxDashboard } = await server.waitForReadyFile(path.join(dir, 'ready.json'));
    await server.waitFor(`${sandboxApi}/readyz`, performance.now());

    /** One refresh-token chain per worker, started through the real code flow. */
    async function startChain(): Promise<{ access: string; refresh: string }> {
      const verifier = oauth.generateRandomCodeVerifier();
      const authorize = new URL(`${sandboxDashboard}/oauth/sandbox/authorize`);
      for (const [k, v] of Object.entries({
        client_id: client.client_id,
        redirect_uri: redirect,
        response_type: 'code',
        scope: 'openid read_only',
        state: 's',
        nonce: 'n',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }))
        authorize.searchParams.set(k, v);
      const browser = new FormBrowser((next) => next.port === '9999');
      let page = await browser.request(authorize.toString());
      for (let step = 0; step < 5 && !page.location; step += 1) {
        page = page.html.includes('name="password"')
          ? await browser.submit(page, '/login', { email: 'soak@example.org', password })
          : await browser.submit(page, '/consent');
      }
      const code = page.location!.searchParams.get('code')!;
      return token({ grant_type: 'authorization_code', code, code_verifier: verifier });
    }

    const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
    async function token(form: Record<string, string>): Promise<{ access: string; refresh: string }> {
      const response = await fetch(`${sandboxApi}/auth/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
      const body = (await response.json()) as { access_token: string; refresh_token: string };
      if (response.status !== 200) throw new Error(`token ${response.status}: ${JSON.stringify(body)}`);
      return { access: body.access_token, refresh: body.refresh_token };
    }

    const counts = { requests: 0, errors: 0 };
    const failures: string[] = [];
    const check = (what: string, status: number, expected: number) => {
      counts.requests += 1;
      if (status !== expected) {
        counts.errors += 1;
        if (failures.length < 10) failures.push(`${what}: ${status}`);
      }
    };
    const get = async (what: string, target: string, headers: Record<string, string> = {}) => {
      const response = await fetch(target, { headers });
      await response.arrayBuffer();
      check(what, response.status, 200);
    };

    const pid = server.pid;
    const samples: { t: number; rss: number }[] = [];
    const started = Date.now();
    const deadline = started + SECONDS * 1000;
    const sampler = setInterval(() => samples.push({ t: (Date.now() - started) / 1000, rss: rssMb(pid) }), 5_000);

    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        let chain = await startChain();
        for (let i = 0; Date.now() < deadline; i += 1) {
          const op = (i + worker) % 10;
          if (op < 4) await get('donations (API key)', `${sandboxApi}/v1/donations?limit=20`, { authorization: `Bearer ${key}` });
          else if (op < 6) await get('grants (token)', `${sandboxApi}/v1/grants`, { authorization: `Bearer ${chain.access}` });
          else if (op === 6) {
            chain = await token({ grant_type: 'refresh_token', refresh_token: chain.refresh }).then(
              (next) => {
                check('refresh', 200, 200);
                return next;
              },
              (error: Error) => {
                check('refresh', 0, 200);
                failures.push(error.message);
                return chain;
              },
            );
          } else if (op === 7) {
            const response = await fetch(`${sandboxApi}/auth/oauth/introspect`, {
              method: 'POST',
              headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ token: chain.access }),
            });
            const body = (await response.json()) as { active: boolean };
            check('introspect', response.status === 200 && body.active ? 200 : response.status, 200);
          } else if (op === 8) await get('discovery', `${sandboxApi}/.well-known/openid-configuration`);
          else await get('readyz', `${sandboxApi}/readyz`);
        }
      }),
    );
    clearInterval(sampler);

    const firstMinute = samples.filter((s) => s.t >= 30 && s.t <= 90);
    const lastMinute = samples.filter((s) => s.t >= SECONDS - 60);
    const avg = (list: { rss: number }[]) => list.reduce((sum, s) => sum + s.rss, 0) / Math.max(1, list.length);
    const baseline = avg(firstMinute.length ? firstMinute : samples.slice(0, 3));
    const final = avg(lastMinute.length ? lastMinute : samples.slice(-3));
    const result = {
      date: new Date().toISOString(),
      seconds: SECONDS,
      workers: WORKERS,
      requests: counts.requests,
      requests_per_second: Math.round(counts.requests / SECONDS),
      errors: counts.errors,
      failures,
      rss_mb: { baseline: Math.round(baseline), final: Math.round(final), peak: Math.round(Math.max(...samples.map((s) => s.rss))) },
      rss_growth_percent: Math.round(((final - baseline) / baseline) * 1000) / 10,
      verdict: counts.errors === 0 && final < baseline * 1.1 ? 'pass' : 'fail',
    };
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    // soak-2026-11-22T07-08Z.json: one file per run, never overwriting an earlier one.
    const stamp = `${result.date.slice(0, 13)}-${result.date.slice(14, 16)}Z`;
    fs.writeFileSync(
      path.join(ROOT, 'bench', 'results', `soak-${stamp}.json`),
      `${JSON.stringify({ ...result, server: `UV_THREADPOOL_SIZE=${PRODUCTION_THREADPOOL_SIZE} node ${PRODUCTION_NODE_ARGS.join(' ')} ${PRODUCTION_ENTRY}`, samples }, null, 2)}\n`,
    );
    console.log(JSON.stringify(result, null, 2));
    process.exitCode = result.verdict === 'pass' ? 0 : 1;
  } finally {
    await server?.stop();
    await db.destroy();
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
