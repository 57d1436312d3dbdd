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
import { encodeCursor } from '../../src/gateway/routing/pagination.js';
import { createLogger } from '../../src/logging/logger.js';
import { insertAuthorization } from '../../src/authorizations/authorizations.js';
import { FDX_AUTHORIZATION_DETAILS_TYPE, type FdxConsentRequest } from '../../src/authorizations/fdx-consent-request.js';
import { newFdxConsentId, recordFdxConsent } from '../../src/authorizations/fdx-consents.js';
import { consentExpiry } from '../../src/authorizations/fdx-consent.js';
import { markConsentActive } from '../../src/authorizations/fdx-consents-repository.js';
import { seedBankData } from '../../src/demo/bank-data.js';
import type { GrantedFdxDetail } from '../../src/oidc/fdx-authorization-details.js';
import {
  addClient,
  addFapi2Client,
  generateClientId,
  generateClientSecret,
  hashClientSecret,
  registerClientEntries,
} from '../../src/oidc/clients/service.js';
import { clientEntrySchema } from '../../src/oidc/clients/schema.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { benchKey, type BenchKey } from './dpop.js';

/**
 * Almoner's side of the setup, through Almoner's own code: the schema (migrations), a
 * nonprofit with staff (argon2id passwords at the configured parameters), clients registered
 * the way `admin clients add` does it, 100,000 donations from the demo generator, and
 * tokens and codes minted through the provider's own models over the real database. For the
 * bank-data scenarios, also deposit accounts, an admin and two bank-data clients (BankSetup).
 */

export const ENVIRONMENT = 'sandbox' as const;
export const SCOPE = 'openid read_only';
export const REDIRECT_URI = 'http://127.0.0.1:9999/callback';
export const BENCH_EIN = '12-3456789';
/** What both bank-data clients' authorizations grant: the FDX API's scopes (and an id_token). */
export const BANK_SCOPE = 'openid read_only read:bank_accounts';
export const FAPI_REDIRECT_URI = 'http://127.0.0.1:9998/callback';
/** The FDX consent of every fapi2 authorization: both accounts, 90 days, a year of history. */
const BANK_CONSENT: FdxConsentRequest = {
  durationType: 'TIME_BOUND',
  durationPeriod: 90,
  lookbackPeriod: 365,
  resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS'] }],
};

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

/**
 * The bank-data side of the setup: an admin (only admins may grant the FDX scopes), the
 * organization's deposit accounts, a standard client with the FDX scopes (client_secret_basic,
 * Bearer tokens) and a fapi2 client (private_key_jwt with `signingKey`, tokens bound to `dpopKey`).
 */
export interface BankSetup {
  admin: Staff;
  accountIds: string[];
  standard: Client;
  fapi2: { client_id: string; signingKey: BenchKey; dpopKey: BenchKey };
}

export class AlmonerSetup {
  readonly config: AppConfig;
  readonly db: Db;
  readonly passwordParams: PasswordParams;
  orgId = '';
  staff: Staff[] = [];
  client: Client = { client_id: '', client_secret: '' };
  uncachedClients: Client[] = [];
  bank: BankSetup | undefined;
  private runtime: Runtime | undefined;
  private grants: { grantId: string; userId: string }[] = [];
  private grantCursor = 0;

  /** `env` is exactly the server's environment, so the configuration is the server's. */
  constructor(env: NodeJS.ProcessEnv) {
    this.config = loadConfig({ env });
    this.passwordParams = passwordParamsFrom(this.config);
    this.db = createDatabase({ url: this.config.database_url!, poolMax: 16, applicationName: 'almoner-bench' });
  }

  async prepare(options: {
    staff: number;
    uncachedClients: number;
    donations: number;
    bankData: boolean;
    log: (line: string) => void;
  }): Promise<void> {
    const { log } = options;
    await migrateToLatest(this.db);
    const org = await addOrganization(this.db, { ein: BENCH_EIN, name: 'Bench Food Bank' });
    this.orgId = org.id;
    this.staff = await mapLimit(
      Array.from({ length: options.staff }, (_, i) => i),
      4,
      async (i) => {
        const email = `staff${i}@bench.example.org`;
        const password = `bench-password-${i}-${crypto.randomBytes(6).toString('hex')}`;
        const user = await addUser(this.db, { email, password, displayName: `Staff ${i}` }, this.passwordParams);
        await addMember(this.db, { org: BENCH_EIN, email, role: 'member' });
        return { id: user.id, email, password };
      },
    );
    log(
      `  ${this.staff.length} staff users (argon2id m=${this.passwordParams.memoryKib} KiB, t=${this.passwordParams.timeCost}, p=${this.passwordParams.parallelism})`,
    );

    // Clients exactly as `admin clients add` registers them (id, 256-bit secret, argon2id hash
    // at the configured parameters, the database and the clients file), in one revision.
    const made = await mapLimit(
      Array.from({ length: 1 + options.uncachedClients }, (_, i) => i),
      4,
      async (i) => {
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
      },
    );
    await registerClientEntries(
      { db: this.db, clientsFile: this.config.clients_file, passwordParams: this.passwordParams },
      made.map((m) => m.entry),
    );
    const clients = made.map((m) => ({ client_id: m.entry.client_id, client_secret: m.secret }));
    this.client = clients[0]!;
    this.uncachedClients = clients.slice(1);
    log(`  ${clients.length} clients registered`);

    const t0 = performance.now();
    await this.db
      .transaction()
      .execute((trx) => seedNonprofitData(trx, { organizationId: this.orgId, environment: ENVIRONMENT, donations: options.donations }));
    log(`  ${options.donations} donations seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (options.bankData) await this.prepareBankData(log);
    await sql`analyze`.execute(this.db);
    log('  ANALYZE');
  }

  /** The bank-data side (BankSetup): seeded and registered through the same services as the demo data and `admin clients add`. */
  private async prepareBankData(log: (line: string) => void): Promise<void> {
    const email = 'bank-admin@bench.example.org';
    const password = `bench-password-admin-${crypto.randomBytes(6).toString('hex')}`;
    const user = await addUser(this.db, { email, password, displayName: 'Bank Admin' }, this.passwordParams);
    await addMember(this.db, { org: BENCH_EIN, email, role: 'admin' });
    const { account_ids: accountIds } = await this.db
      .transaction()
      .execute((trx) => seedBankData(trx, { organizationId: this.orgId, environment: ENVIRONMENT, accounts: 2 }));
    const registry = { db: this.db, clientsFile: this.config.clients_file, passwordParams: this.passwordParams };
    // The FDX API is IP-restricted: a client may call it only from its registered ranges (both the same here).
    const ipAllowList = ['127.0.0.0/8'];
    const standard = await addClient(registry, {
      environment: ENVIRONMENT,
      name: 'Bench Bank App',
      redirectUris: [REDIRECT_URI],
      scopes: ['openid', 'offline_access', 'read_only', 'read:bank_accounts'],
      ipAllowList,
    });
    const signingKey = await benchKey('ES256');
    const dpopKey = await benchKey('ES256');
    const fapi2 = await addFapi2Client(registry, {
      environment: ENVIRONMENT,
      name: 'Bench Aggregator',
      redirectUris: [FAPI_REDIRECT_URI],
      scopes: ['openid', 'offline_access', 'read_only', 'read:bank_accounts'],
      ipAllowList,
      jwks: { keys: [{ ...signingKey.publicJwk, kid: 'bench-signing-1', use: 'sig' }] },
    });
    this.bank = {
      admin: { id: user.id, email, password },
      accountIds,
      standard: { client_id: standard.client_id, client_secret: standard.client_secret },
      fapi2: { client_id: fapi2.client_id, signingKey, dpopKey },
    };
    log(
      `  bank data: an admin, ${accountIds.length} deposit accounts, a standard client with the FDX scopes and a fapi2 client (ES256 keys)`,
    );
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
    const made = await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => {
        const user = this.staff[i % this.staff.length]!;
        const grant = new provider.Grant({ accountId: user.id, clientId: this.client.client_id });
        grant.addOIDCScope(SCOPE);
        const grantId = await grant.save();
        await insertAuthorization(this.db, {
          grantId,
          environment: ENVIRONMENT,
          clientId: this.client.client_id,
          subjectType: 'user',
          userId: user.id,
          organizationId: this.orgId,
          scopes: SCOPE.split(' '),
        });
        return { grantId, userId: user.id };
      },
    );
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
  /** `scope` without openid: refresh tokens whose refresh answers no id_token (the id_token scenario). */
  async mintRefreshTokens(n: number, scope = SCOPE): Promise<string[]> {
    const provider = await this.provider();
    const client = await provider.Client.find(this.client.client_id);
    const grants = await this.takeGrants(n);
    return mapLimit(grants, 16, async ({ grantId, userId }) => {
      const token = new provider.RefreshToken({
        accountId: userId,
        client,
        grantId,
        gty: 'authorization_code',
        scope,
        rotations: 0,
        authTime: Math.floor(Date.now() / 1000),
        nonce: crypto.randomBytes(8).toString('hex'),
        expiresWithSession: false,
      } as never);
      return token.save();
    });
  }

  /**
   * Refresh tokens for the bank-data clients, as a code exchange issues them: one per new
   * authorization of the admin (scope BANK_SCOPE), each the start of its own chain. A fapi2
   * authorization is recorded as the consent screen records it (the Grant keeps the FDX detail
   * naming its consent; the consent chooses both accounts) and its refresh token is bound to
   * the DPoP key (jkt), as the token endpoint binds it.
   */
  async mintBankRefreshTokens(kind: 'standard' | 'fapi2', n: number): Promise<string[]> {
    const bank = this.bank;
    if (!bank) throw new Error('no bank data: prepare({ bankData: true }) first');
    const provider = await this.provider();
    const clientId = kind === 'fapi2' ? bank.fapi2.client_id : bank.standard.client_id;
    const client = await provider.Client.find(clientId);
    if (!client) throw new Error(`the provider does not know client ${clientId}`);
    const userId = bank.admin.id;
    return mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async () => {
        const grant = new provider.Grant({ accountId: userId, clientId });
        grant.addOIDCScope(BANK_SCOPE);
        const consentId = kind === 'fapi2' ? newFdxConsentId() : undefined;
        if (consentId)
          grant.addRar({
            type: FDX_AUTHORIZATION_DETAILS_TYPE,
            consentId,
            consentRequest: BANK_CONSENT,
          } satisfies GrantedFdxDetail as never);
        const grantId = await grant.save();
        await this.db.transaction().execute(async (trx) => {
          await insertAuthorization(trx, {
            grantId,
            environment: ENVIRONMENT,
            clientId,
            subjectType: 'user',
            userId,
            organizationId: this.orgId,
            scopes: BANK_SCOPE.split(' '),
          });
          if (consentId) {
            const consent = await recordFdxConsent(trx, {
              id: consentId,
              environment: ENVIRONMENT,
              organizationId: this.orgId,
              clientId,
              grantId,
              userId,
              request: BANK_CONSENT,
              accountIds: bank.accountIds,
            });
            // ACTIVE, as the code's exchange makes it (recorded PENDING). Not through
            // activateFdxConsentIn: it would supersede, and revoke, every other authorization's
            // consent of this client, and the scenarios need all of them live at once.
            await markConsentActive(trx, ENVIRONMENT, consent.id, consentExpiry(BANK_CONSENT, new Date()));
          }
        });
        const token = new provider.RefreshToken({
          accountId: userId,
          client,
          grantId,
          gty: 'authorization_code',
          scope: BANK_SCOPE,
          rotations: 0,
          authTime: Math.floor(Date.now() / 1000),
          nonce: crypto.randomBytes(8).toString('hex'),
          expiresWithSession: false,
          ...(kind === 'fapi2' ? { jkt: bank.fapi2.dpopKey.thumbprint } : {}),
        } as never);
        return token.save();
      },
    );
  }

  /** Authorization codes with S256 PKCE for existing authorizations, as the authorization endpoint issues them. */
  async mintCodes(n: number): Promise<{ code: string; verifier: string }[]> {
    const provider = await this.provider();
    const client = await provider.Client.find(this.client.client_id);
    // Codes reuse the authorizations the refresh tokens were minted for (as a returning
    // user's covered request does), so minting costs one insert and fits the code's 60 s.
    if (this.grants.length === 0) await this.mintGrants(n);
    return mapLimit(
      Array.from({ length: n }, (_, i) => this.grants[i % this.grants.length]!),
      16,
      async ({ grantId, userId }) => {
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
      },
    );
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
