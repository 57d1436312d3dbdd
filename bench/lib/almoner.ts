import crypto from 'node:crypto';
import type Provider from 'oidc-provider';
import { sql } from 'kysely';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { addMember } from '../../src/accounts/memberships.js';
import { passwordParamsFrom, type PasswordParams } from '../../src/accounts/passwords.js';
import { loadConfig } from '../../src/config/load.js';
import type { AppConfig } from '../../src/config/schema.js';
import { createDatabase, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { seedNonprofitData } from '../../src/demo/nonprofit-data.js';
import { encodeCursor } from '../../src/gateway/pagination.js';
import { createLogger } from '../../src/logging/logger.js';
import { insertAuthorization } from '../../src/authorizations/authorizations.js';
import { generateClientId, generateClientSecret, hashClientSecret, registerClientEntries } from '../../src/oidc/clients/service.js';
import { clientEntrySchema } from '../../src/oidc/clients/schema.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';

/**
 * Almoner's side of the setup, through Almoner's own code: the schema (migrations), a
 * nonprofit with staff (argon2id passwords at the configured parameters), clients registered
 * the way `admin clients add` does it, 100,000 donations from the demo generator, and
 * tokens and codes minted through the provider's own models over the real database.
 */

export const ENVIRONMENT = 'sandbox' as const;
export const SCOPE = 'openid read_only';
export const REDIRECT_URI = 'http://127.0.0.1:9999/callback';
export const BENCH_EIN = '12-3456789';

export interface Client {
  client_id: string;
  client_secret: string;
}

export interface Staff {
  id: string;
  email: string;
  password: string;
}

/** Runs `fn` over `items` with at most `concurrency` in flight, keeping the order of results. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (;;) {
        const index = next;
        next += 1;
        if (index >= items.length) return;
        results[index] = await fn(items[index]!, index);
      }
    }),
  );
  return results;
}

export class AlmonerSetup {
  readonly config: AppConfig;
  readonly db: Db;
  readonly passwordParams: PasswordParams;
  orgId = '';
  staff: Staff[] = [];
  client: Client = { client_id: '', client_secret: '' };
  uncachedClients: Client[] = [];
  private runtime: Runtime | undefined;
  private grants: { grantId: string; userId: string }[] = [];
  private grantCursor = 0;

  /** `env` is exactly the server's environment, so the configuration is the server's. */
  constructor(env: NodeJS.ProcessEnv) {
    this.config = loadConfig({ env });
    this.passwordParams = passwordParamsFrom(this.config);
    this.db = createDatabase({ url: this.config.database_url!, poolMax: 16, applicationName: 'almoner-bench' });
  }

  async prepare(options: { staff: number; uncachedClients: number; donations: number; log: (line: string) => void }): Promise<void> {
    const { log } = options;
    await migrateToLatest(this.db);
    const org = await addOrganization(this.db, { ein: BENCH_EIN, name: 'Bench Food Bank' });
    this.orgId = org.id;
    this.staff = await mapLimit(Array.from({ length: options.staff }, (_, i) => i), 4, async (i) => {
      const email = `staff${i}@bench.example.org`;
      const password = `bench-password-${i}-${crypto.randomBytes(6).toString('hex')}`;
      const user = await addUser(this.db, { email, password, displayName: `Staff ${i}` }, this.passwordParams);
      await addMember(this.db, { org: BENCH_EIN, email, role: 'member' });
      return { id: user.id, email, password };
    });
    log(`  ${this.staff.length} staff users (argon2id m=${this.passwordParams.memoryKib} KiB, t=${this.passwordParams.timeCost}, p=${this.passwordParams.parallelism})`);

    // Clients exactly as `admin clients add` registers them (id, 256-bit secret, argon2id hash
    // at the configured parameters, the database and the clients file), in one revision.
    const made = await mapLimit(Array.from({ length: 1 + options.uncachedClients }, (_, i) => i), 4, async (i) => {
      const secret = generateClientSecret();
      const entry = clientEntrySchema.parse({
        environment: ENVIRONMENT,
        client_id: generateClientId(ENVIRONMENT),
        client_secret_hash: await hashClientSecret(secret, this.passwordParams),
        name: i === 0 ? 'Bench App' : `Bench App ${i}`,
        redirect_uris: [REDIRECT_URI],
        scopes: ['read_only', 'read_write', 'openid', 'offline_access'],
      });
      return { entry, secret };
    });
    await registerClientEntries({ db: this.db, clientsFile: this.config.clients_file, passwordParams: this.passwordParams }, made.map((m) => m.entry));
    const clients = made.map((m) => ({ client_id: m.entry.client_id, client_secret: m.secret }));
    this.client = clients[0]!;
    this.uncachedClients = clients.slice(1);
    log(`  ${clients.length} clients registered`);

    const t0 = performance.now();
    await this.db.transaction().execute((trx) => seedNonprofitData(trx, { organizationId: this.orgId, environment: ENVIRONMENT, donations: options.donations }));
    await sql`analyze`.execute(this.db);
    log(`  ${options.donations} donations seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s (then ANALYZE)`);
  }

  /**
   * The provider of the bench environment, built the way the server builds it (createRuntime,
   * never started: no listener, no background work) over the same database, keys and secrets.
   */
  async provider(): Promise<Provider> {
    this.runtime ??= await createRuntime(this.config, this.db, createLogger('silent'));
    return this.runtime.oidc.provider(ENVIRONMENT);
  }

  /**
   * New authorizations as the consent screen records them: a provider Grant plus our
   * oauth_authorizations row. Spread over the staff users.
   */
  async mintGrants(n: number): Promise<void> {
    const provider = await this.provider();
    const made = await mapLimit(Array.from({ length: n }, (_, i) => i), 16, async (i) => {
      const user = this.staff[i % this.staff.length]!;
      const grant = new provider.Grant({ accountId: user.id, clientId: this.client.client_id });
      grant.addOIDCScope(SCOPE);
      const grantId = await grant.save();
      await insertAuthorization(this.db, { grantId, environment: ENVIRONMENT, clientId: this.client.client_id, subjectType: 'user', userId: user.id, organizationId: this.orgId, scopes: SCOPE.split(' ') });
      return { grantId, userId: user.id };
    });
    this.grants.push(...made);
  }

  /** The next `n` authorizations, minting more when the pool runs out (one chain each). */
  private async takeGrants(n: number) {
    const missing = this.grantCursor + n - this.grants.length;
    if (missing > 0) await this.mintGrants(missing);
    const taken = this.grants.slice(this.grantCursor, this.grantCursor + n);
    this.grantCursor += n;
    return taken;
  }

  /** Refresh tokens as a code exchange issues them: one per authorization, each the start of its own chain. */
  async mintRefreshTokens(n: number): Promise<string[]> {
    const provider = await this.provider();
    const client = await provider.Client.find(this.client.client_id);
    const grants = await this.takeGrants(n);
    return mapLimit(grants, 16, async ({ grantId, userId }) => {
      const token = new provider.RefreshToken({ accountId: userId, client, grantId, gty: 'authorization_code', scope: SCOPE, rotations: 0, authTime: Math.floor(Date.now() / 1000), nonce: crypto.randomBytes(8).toString('hex'), expiresWithSession: false } as never);
      return token.save();
    });
  }

  /** Authorization codes with S256 PKCE for existing authorizations, as the authorization endpoint issues them. */
  async mintCodes(n: number): Promise<{ code: string; verifier: string }[]> {
    const provider = await this.provider();
    const client = await provider.Client.find(this.client.client_id);
    // Codes reuse the authorizations the refresh tokens were minted for (as a returning
    // user's covered request does), so minting costs one insert and fits the code's 60 s.
    if (this.grants.length === 0) await this.mintGrants(n);
    return mapLimit(Array.from({ length: n }, (_, i) => this.grants[i % this.grants.length]!), 16, async ({ grantId, userId }) => {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const code = new provider.AuthorizationCode({
        accountId: userId,
        client,
        grantId,
        scope: SCOPE,
        redirectUri: REDIRECT_URI,
        codeChallenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
        codeChallengeMethod: 'S256',
        nonce: crypto.randomBytes(8).toString('hex'),
        authTime: Math.floor(Date.now() / 1000),
        expiresWithSession: false,
      } as never);
      return { code: await code.save(), verifier };
    });
  }

  /**
   * Makes this process's database connections publish their statistics (a backend does so
   * at most once a second, else only after 10 s idle), so minting is not counted in the
   * transactions of the run that follows.
   */
  async settleStatistics(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await Promise.all(Array.from({ length: 32 }, () => sql`select 1`.execute(this.db)));
  }

  /** Page tokens at `n` random places in the organization's donations (the API's own format). */
  async pageTokens(n: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('donations')
      .select(['created_at', 'id'])
      .where('organization_id', '=', this.orgId)
      .where('environment', '=', ENVIRONMENT)
      .orderBy(sql`random()`)
      .limit(n)
      .execute();
    return rows.map((row) => encodeCursor({ createdAt: row.created_at, id: row.id }));
  }

  /** EXPLAIN ANALYZE of the page query the gateway runs, at a page token. */
  async explainPageQuery(pageToken: string): Promise<string> {
    const [createdAt, id] = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8')) as [string, string];
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers) select * from donations
      where organization_id = ${this.orgId} and environment = ${ENVIRONMENT} and (created_at, id) < (${new Date(createdAt)}, ${id})
      order by created_at desc, id desc limit 101`.execute(this.db);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  async close(): Promise<void> {
    await this.runtime?.stop();
    await this.db.destroy();
  }
}
