import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { findClient } from './clients/repository.js';
import { toClientMetadata, type ClientMetadata } from './client-metadata.js';

/** How long a process reuses a client registration it read (a change must be live within 5 s: docs/oauth.md, "Clients"). */
export const CLIENT_CACHE_MS = 1_000;
const CLIENT_CACHE_MAX = 10_000;

/**
 * The Client model, read from oauth_clients; registration is by admin only, so writes are
 * refused. A registration read is reused for CLIENT_CACHE_MS: every token, introspection and
 * revocation request reads its client, and a busy client would otherwise cost a query each.
 */
export class ClientAdapter {
  private readonly cache = new Map<string, { metadata: ClientMetadata; readAt: number }>();
  /** Reads under way, by id: a burst of requests naming one client reads its registration once. */
  private readonly reading = new Map<string, Promise<ClientMetadata | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly environment: Environment,
  ) {}

  async find(id: string) {
    // Anything but a well-formed client id is simply unknown (and never reaches Postgres,
    // which refuses NUL bytes in text with an error).
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
    const cached = this.cache.get(id);
    // Fresh from its read until CLIENT_CACHE_MS later on the wall clock (the one tests move): a
    // clock stepped back (NTP, a test) ends an entry instead of extending it.
    const age = cached ? Date.now() - cached.readAt : -1;
    if (cached && age >= 0 && age < CLIENT_CACHE_MS) return { ...cached.metadata };
    let read = this.reading.get(id);
    if (!read) {
      read = this.reload(id).finally(() => this.reading.delete(id));
      this.reading.set(id, read);
    }
    const metadata = await read;
    return metadata && { ...metadata };
  }

  /** Reads the registration from the database, bypassing (and refreshing) the cache. */
  async reload(id: string) {
    const row = await findClient(this.db, this.environment, id);
    if (!row) {
      this.cache.delete(id);
      return undefined;
    }
    const metadata = toClientMetadata(row, this.environment);
    if (this.cache.size >= CLIENT_CACHE_MAX) this.cache.clear();
    this.cache.set(id, { metadata, readAt: Date.now() });
    return { ...metadata };
  }

  async upsert(): Promise<never> {
    throw new Error('clients are registered through the clients file (clients_file), never by the provider');
  }

  async destroy(): Promise<never> {
    throw new Error('clients are registered through the clients file (clients_file), never by the provider');
  }
}
