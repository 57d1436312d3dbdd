import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { OauthClientsRevisionsTable, Environment, OauthClientsTable } from '../../db/schema.js';
import type { ClientEntry } from './schema.js';

/** A registered client as stored: the one type of the client row. */
export type ClientRow = Selectable<OauthClientsTable>;

export function findClient(db: Executor, environment: Environment, clientId: string) {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

export function listClients(db: Executor, environment?: Environment) {
  let query = db.selectFrom('oauth_clients').selectAll().orderBy('environment').orderBy('name').orderBy('client_id');
  if (environment) query = query.where('environment', '=', environment);
  return query.execute();
}

/** Makes the table equal to the file: upsert every entry, delete the rest. */
export async function replaceAllClients(db: Executor, entries: readonly ClientEntry[]): Promise<void> {
  const ids = entries.map((e) => e.client_id);
  if (ids.length === 0) {
    await db.deleteFrom('oauth_clients').execute();
    return;
  }
  await db.deleteFrom('oauth_clients').where('client_id', 'not in', ids).execute();
  await db
    .insertInto('oauth_clients')
    .values(
      entries.map((e) => ({
        environment: e.environment,
        client_id: e.client_id,
        client_secret_hash: e.client_secret_hash ?? null,
        name: e.name,
        logo_uri: e.logo_uri ?? null,
        redirect_uris: e.redirect_uris,
        post_logout_redirect_uris: e.post_logout_redirect_uris,
        scopes: e.scopes,
        subject_type: e.subject_type,
        ip_allow_list: e.ip_allow_list,
        require_mfa: e.require_mfa,
        profile: e.profile,
        jwks: e.jwks ? JSON.stringify(e.jwks) : null,
        jwks_uri: e.jwks_uri ?? null,
      })),
    )
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet((eb) => ({
        environment: eb.ref('excluded.environment'),
        client_secret_hash: eb.ref('excluded.client_secret_hash'),
        name: eb.ref('excluded.name'),
        logo_uri: eb.ref('excluded.logo_uri'),
        redirect_uris: eb.ref('excluded.redirect_uris'),
        post_logout_redirect_uris: eb.ref('excluded.post_logout_redirect_uris'),
        scopes: eb.ref('excluded.scopes'),
        subject_type: eb.ref('excluded.subject_type'),
        ip_allow_list: eb.ref('excluded.ip_allow_list'),
        require_mfa: eb.ref('excluded.require_mfa'),
        profile: eb.ref('excluded.profile'),
        jwks: eb.ref('excluded.jwks'),
        jwks_uri: eb.ref('excluded.jwks_uri'),
        updated_at: new Date(),
      })),
    )
    .execute();
}

/** A recorded revision of the registry. */
export type RegistryRevisionRow = Selectable<OauthClientsRevisionsTable>;

/** One lock for every change of the registry, held to the end of the transaction. */
export async function lockRegistry(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('almoner:oauth_clients'))`.execute(trx);
}

/** The current revision: the highest recorded. */
export function currentRevision(db: Executor): Promise<RegistryRevisionRow | undefined> {
  return db.selectFrom('oauth_clients_revisions').selectAll().orderBy('revision', 'desc').limit(1).executeTakeFirst();
}

/** The latest revision that had this content, if any. */
export function revisionWithContent(db: Executor, contentHash: string): Promise<RegistryRevisionRow | undefined> {
  return db
    .selectFrom('oauth_clients_revisions')
    .selectAll()
    .where('content_hash', '=', contentHash)
    .orderBy('revision', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function recordRevision(db: Executor, row: Omit<RegistryRevisionRow, 'applied_at'>): Promise<RegistryRevisionRow> {
  return db.insertInto('oauth_clients_revisions').values(row).returningAll().executeTakeFirstOrThrow();
}
