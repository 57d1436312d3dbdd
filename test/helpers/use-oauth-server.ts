import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase, type Db } from '../../src/db/database.js';
import type { Logger } from '../../src/logging/logger.js';
import type { RuntimeOptions } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createStaff, startOAuthServer, type OAuthTestServer, type Staff } from './oauth-server.js';

export type ClientSpec = Parameters<OAuthTestServer['registerClient']>[0];
export type RegisteredClient = Awaited<ReturnType<OAuthTestServer['registerClient']>>;

/** `N` copies of `T` as a tuple, so `allStaff: [, theirs]` is typed (any number: an array). */
type Tuple<T, N extends number, R extends T[] = []> = number extends N ? T[] : R['length'] extends N ? R : Tuple<T, N, [...R, T]>;

export interface OAuthServerOptions<C extends string, P extends string, N extends number> {
  /** Configuration overrides of the server (and of every peer). */
  config?: Record<string, unknown>;
  /** The server's logger (silent by default). */
  logger?: Logger;
  /** Kysely plugins on the server's database handle only (e.g. a StatementProbe); `testDatabase.db` stays plain. */
  plugins?: KyselyPlugin[];
  /** A pool of this size for the server's own database handle (the test database's has 5). */
  serverPoolMax?: number;
  /** How many nonprofits, each with one user per role, to create (default 1). */
  staff?: N;
  /** Clients to register with the server once the staff exist, by the name the handle gives them. */
  clients?: Record<C, ClientSpec>;
  /** More servers over the same database and clients file, as a deployment's other processes: their overrides on top of `config`. */
  peers?: Record<P, Record<string, unknown>>;
  /** The production profile behind a trusted loopback proxy (see `startOAuthServer`): the test sets X-Forwarded-For. */
  behindLoopbackProxy?: boolean;
  /** The dashboards at http://localhost:<port> (see `startOAuthServer`): the passkey tests. */
  dashboardsAtLocalhost?: boolean;
  /** What the server's runtime is built with beyond its config (startOAuthServer's `runtime`). */
  runtime?: RuntimeOptions;
}

/**
 * What a test file gets. Every member is an object that exists from the start and is filled in
 * by the fixture's beforeAll, so a file can destructure it at its top level and keep its names
 * (`const { testDatabase: t, server } = useOAuthServer()`); read members inside tests and hooks.
 */
export interface OAuthServerFixture<C extends string, P extends string, N extends number> {
  testDatabase: TestDatabase;
  server: OAuthTestServer;
  /** The first nonprofit (absent when `staff: 0`). */
  staff: Staff;
  allStaff: Readonly<Tuple<Staff, N>>;
  clients: Record<C, RegisteredClient>;
  peers: Record<P, OAuthTestServer>;
}

// Filled with Object.assign, which suits the plain objects handed out here (the Kysely instance
// itself is reached as testDatabase.db, a property, for the same reason).
const placeholder = <T>() => ({}) as T;
const placeholders = <K extends string, T>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, placeholder<T>()])) as Record<K, T>;

/**
 * The common setup of a test file that talks to the whole app: its own database, the server on
 * four loopback ports, staff and clients; all torn down after the file. Registers its own
 * beforeAll/afterAll, so a file's own hooks run after it (and their afterAll before its teardown).
 */
export function useOAuthServer<C extends string = never, P extends string = never, N extends number = 1>(
  options: OAuthServerOptions<C, P, N> = {},
): OAuthServerFixture<C, P, N> {
  const clientSpecs = Object.entries(options.clients ?? {}) as [C, ClientSpec][];
  const peerConfigs = Object.entries(options.peers ?? {}) as [P, Record<string, unknown>][];
  const allStaff = Array.from({ length: options.staff ?? 1 }, () => placeholder<Staff>());
  const fixture: OAuthServerFixture<C, P, N> = {
    testDatabase: placeholder(),
    server: placeholder(),
    staff: allStaff[0] ?? placeholder(),
    allStaff: allStaff as Tuple<Staff, N>,
    clients: placeholders(clientSpecs.map(([name]) => name)),
    peers: placeholders(peerConfigs.map(([name]) => name)),
  };
  // What was really created, for teardown after a partial failure.
  let testDatabase: TestDatabase | undefined;
  let ownPool: Db | undefined;
  const started: OAuthTestServer[] = [];

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    Object.assign(fixture.testDatabase, testDatabase);
    if (options.serverPoolMax) ownPool = createDatabase({ url: testDatabase.url, poolMax: options.serverPoolMax });
    const serverDb = (options.plugins ?? []).reduce((db, plugin) => db.withPlugin(plugin), ownPool ?? testDatabase.db);
    const start = {
      behindLoopbackProxy: options.behindLoopbackProxy,
      dashboardsAtLocalhost: options.dashboardsAtLocalhost,
      runtime: options.runtime,
    };
    const server = await startOAuthServer(serverDb, options.config, options.logger, start);
    started.push(server);
    Object.assign(fixture.server, server);
    for (const [name, overrides] of peerConfigs) {
      // One clients file for all, as processes of one deployment share it.
      const peer = await startOAuthServer(
        serverDb,
        { ...options.config, ...overrides, clients_file: server.config.clients_file },
        options.logger,
        start,
      );
      started.push(peer);
      Object.assign(fixture.peers[name], peer);
    }
    for (const staff of allStaff) Object.assign(staff, await createStaff(testDatabase.db));
    for (const [name, spec] of clientSpecs) Object.assign(fixture.clients[name], await server.registerClient(spec));
  });

  afterAll(async () => {
    for (const server of started.splice(0).reverse()) await server.close();
    await ownPool?.destroy();
    await testDatabase?.drop();
  });

  return fixture;
}
