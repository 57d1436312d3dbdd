import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db/database.js';
import { addClient, type AddClientInput } from '../../src/oidc/clients/service.js';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { addMember } from '../../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { testApp, type TestApp } from './app.js';
import { requestScope } from './statement-probe.js';
import type { Logger } from '../../src/logging/logger.js';
import type { RuntimeOptions } from '../../src/runtime.js';

const closeServer = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/**
 * `count` HTTP servers already listening on loopback ports the system chose, with no handler
 * yet. Binding first means no other test file can take a port between lookup and listen.
 */
async function listenOnFreePorts(count: number): Promise<http.Server[]> {
  const bound = await Promise.allSettled(
    Array.from({ length: count }, () => {
      const server = http.createServer();
      return new Promise<http.Server>((resolve, reject) => {
        server.once('error', reject);
        // A backlog above the floods the tests send at once (a thousand requests, each on a
        // connection of its own): with Node's default of 511, a loaded host accepts too slowly,
        // the kernel drops the surplus connection attempts, and the client's connect times out.
        server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
          server.off('error', reject);
          resolve(server);
        });
      });
    }),
  );
  const servers = bound.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = bound.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map(closeServer));
    throw failed.reason;
  }
  return servers;
}

const origin = (server: http.Server, scheme = 'http', hostname = '127.0.0.1') =>
  `${scheme}://${hostname}:${(server.address() as AddressInfo).port}`;

export interface OAuthTestServer extends TestApp {
  /** The database the server runs on (for helpers that arrange state a person would, faster). */
  db: Db;
  urls: { api: string; sandboxApi: string; dashboard: string; sandboxDashboard: string };
  close(): Promise<void>;
  registerClient(
    input: Partial<AddClientInput> & { environment: 'production' | 'sandbox' },
  ): Promise<{ client_id: string; client_secret: string }>;
}

export interface StartOptions {
  /**
   * The production profile behind a TLS-terminating proxy on loopback: the public URLs are
   * https, 127.0.0.1 is a trusted proxy, and the test plays the proxy, sending plain HTTP to
   * `urls` with X-Forwarded-Proto: https.
   */
  behindLoopbackProxy?: boolean;
  /** What the runtime is built with beyond its config (e.g. a smaller client-secret record count). */
  runtime?: RuntimeOptions;
  /**
   * The dashboards at http://localhost:<port> rather than 127.0.0.1: WebAuthn needs a domain
   * name for its relying party, so the passkey tests use this (they still listen on 127.0.0.1).
   */
  dashboardsAtLocalhost?: boolean;
}

/**
 * The whole app listening on four real loopback ports, like `npm start`, over a test database.
 * `urls` are where the test connects (plain HTTP on loopback).
 */
export async function startOAuthServer(
  db: Db,
  overrides: Record<string, unknown> = {},
  logger?: Logger,
  options: StartOptions = {},
): Promise<OAuthTestServer> {
  // The four listeners bind first; the config is built from the ports they got.
  const servers = await listenOnFreePorts(4);
  const hostnames = [
    '127.0.0.1',
    '127.0.0.1',
    ...(options.dashboardsAtLocalhost ? ['localhost', 'localhost'] : ['127.0.0.1', '127.0.0.1']),
  ];
  const [api, sandboxApi, dashboard, sandboxDashboard] = servers.map((server, i) => origin(server, 'http', hostnames[i])) as [
    string,
    string,
    string,
    string,
  ];
  const urls = { api, sandboxApi, dashboard, sandboxDashboard };
  const [base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url] = servers.map((server, i) =>
    origin(server, options.behindLoopbackProxy ? 'https' : 'http', hostnames[i]),
  );
  const proxy = options.behindLoopbackProxy ? { trusted_proxies: ['127.0.0.1/32'] } : {};
  const env = options.behindLoopbackProxy
    ? {
        ALMONER_PROFILE: 'production',
        DATABASE_URL: 'postgres://unused/x',
        ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
      }
    : {};
  let test: TestApp;
  try {
    test = await testApp(
      db,
      { base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url, ...proxy, ...overrides },
      env,
      logger,
      options.runtime,
    );
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    throw error;
  }
  // Background chores run as in `npm start`: clients-file polling, key watcher, sweeper.
  test.runtime.start();
  const handler = test.app.callback();
  // Each request's statements are told from the background chores' (StatementProbe's inRequest).
  for (const server of servers)
    server.on('request', (req, res) => requestScope.run({ method: req.method ?? '', url: req.url ?? '' }, () => handler(req, res)));
  return {
    ...test,
    db,
    urls,
    async close() {
      await test.runtime.stop();
      await Promise.all(servers.map(closeServer));
    },
    registerClient(input) {
      const defaults: AddClientInput = {
        environment: input.environment,
        name: 'Test App',
        redirectUris: [input.environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback'],
        scopes: ['read_only', 'read_write', 'openid', 'offline_access'],
      };
      return addClient(
        { db, clientsFile: test.config.clients_file, passwordParams: MIN_PASSWORD_PARAMS, profile: test.config.profile },
        { ...defaults, ...input },
      );
    },
  };
}

export interface Staff {
  orgId: string;
  ein: string;
  users: Record<'owner' | 'admin' | 'member' | 'read_only', { email: string; password: string; id: string }>;
}

let einCounter = 0;
/** A nonprofit (or, with `kind`, a fund provider or a grantmaker) with one user per role. */
export async function createStaff(db: Db, options: { kind?: 'nonprofit' | 'fund_provider' | 'grantmaker' } = {}): Promise<Staff> {
  einCounter += 1;
  const ein = `7${String(process.pid % 1000).padStart(3, '0')}${String(einCounter).padStart(5, '0')}`.slice(0, 9);
  const suffix = crypto.randomBytes(3).toString('hex');
  const kind = options.kind ?? 'nonprofit';
  const org = await addOrganization(db, {
    ein,
    name: `${{ nonprofit: 'Nonprofit', fund_provider: 'Fund provider', grantmaker: 'Grantmaker' }[kind]} ${suffix}`,
    kind,
  });
  const users = {} as Staff['users'];
  for (const role of ['owner', 'admin', 'member', 'read_only'] as const) {
    const email = `${role.replace('_', '')}-${suffix}@example.org`;
    const password = `pw-${role}-${suffix}`;
    const user = await addUser(db, { email, password }, MIN_PASSWORD_PARAMS);
    await addMember(db, { org: ein, email, role });
    users[role] = { email, password, id: user.id };
  }
  return { orgId: org.id, ein, users };
}
