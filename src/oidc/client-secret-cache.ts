import crypto from 'node:crypto';
import argon2 from 'argon2';

/**
 * argon2id on every token request would cap a process at a few dozen requests per second,
 * so a successful check is remembered briefly. Entries are keyed by an HMAC of the client
 * id, the stored hash and the presented secret: the cache never holds a secret, and a
 * rotated secret (a new stored hash) misses at once in every process. Failures are never
 * cached.
 */
export class ClientSecretCache {
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly key: Buffer,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  private entryKey(clientId: string, storedHash: string, presented: string): string {
    return crypto.createHmac('sha256', this.key).update(clientId).update('\0').update(storedHash).update('\0').update(presented).digest('base64url');
  }

  async verify(clientId: string, storedHash: string, presented: string): Promise<boolean> {
    if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
    const key = this.entryKey(clientId, storedHash, presented);
    const expires = this.entries.get(key);
    if (expires !== undefined) {
      if (expires > Date.now()) return true;
      this.entries.delete(key);
    }
    let ok = false;
    try {
      ok = await argon2.verify(storedHash, presented);
    } catch {
      ok = false;
    }
    if (ok) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, Date.now() + this.ttlMs);
    }
    return ok;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
