import http from 'node:http';
import net from 'node:net';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db/database.js';
import { addClient, type AddClientInput } from '../../src/oidc/clients/service.js';
import { addMember, addOrganization, addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { testApp, type TestApp } from './app.js';
import type { Logger } from '../../src/logging/logger.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface OAuthTestServer extends TestApp {
  urls: { api: string; sandboxApi: string; dashboard: string; sandboxDashboard: string };
  close(): Promise<void>;
  registerClient(input: Partial<AddClientInput> & { environment: 'production' | 'sandbox' }): Promise<{ client_id: string; client_secret: string }>;
}

/** The whole app listening on four real loopback ports, like `npm start`, over a test database. */
export async function startOAuthServer(db: Db, overrides: Record<string, unknown> = {}, logger?: Logger): Promise<OAuthTestServer> {
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const urls = {
    api: `http://127.0.0.1:${ports[0]}`,
    sandboxApi: `http://127.0.0.1:${ports[1]}`,
    dashboard: `http://127.0.0.1:${ports[2]}`,
    sandboxDashboard: `http://127.0.0.1:${ports[3]}`,
  };
  const test = await testApp(db, { base_url: urls.api, sandbox_base_url: urls.sandboxApi, dashboard_url: urls.dashboard, sandbox_dashboard_url: urls.sandboxDashboard, ...overrides }, {}, logger);
  // Background chores run as in `npm start`: clients-file polling, key watcher, sweeper.
  test.runtime.start();
  const handler = test.app.callback();
  const servers = await Promise.all(
    ports.map(
      (port) =>
        new Promise<http.Server>((resolve) => {
          const server = http.createServer(handler);
          server.listen(port, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  return {
    ...test,
    urls,
    async close() {
      await test.runtime.stop();
      await Promise.all(servers.map((s) => new Promise((resolve) => { s.closeAllConnections(); s.close(resolve); })));
    },
    registerClient(input) {
      const defaults: AddClientInput = {
        environment: input.environment,
        name: 'Test App',
        redirectUris: [input.environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback'],
        scopes: ['read_only', 'read_write', 'openid', 'offline_access'],
      };
      return addClient({ db, clientsFile: test.config.clients_file, passwordParams: MIN_PASSWORD_PARAMS }, { ...defaults, ...input });
    },
  };
}

export interface Staff {
  orgId: string;
  ein: string;
  users: Record<'owner' | 'admin' | 'member' | 'read_only', { email: string; password: string; id: string }>;
}

let einCounter = 0;
/** A nonprofit with one user per role. */
export async function createStaff(db: Db): Promise<Staff> {
  einCounter += 1;
  const ein = `7${String(process.pid % 1000).padStart(3, '0')}${String(einCounter).padStart(5, '0')}`.slice(0, 9);
  const suffix = crypto.randomBytes(3).toString('hex');
  const org = await addOrganization(db, { ein, name: `Nonprofit ${suffix}` });
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
