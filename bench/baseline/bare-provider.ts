/**
 * Baseline for the token-endpoint scenarios (the limit): the bare oidc-provider of
 * bench/lib/bare-oidc.ts (Almoner's token settings) on the library's own in-memory adapter,
 * a process-local LRU map (Almoner's storage is Postgres). Its durable counterpart, the peer,
 * is bench/baseline/durable-provider.ts.
 *
 * Environment: PORT, ADMIN_PORT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI (bench/lib/bare-oidc.ts).
 *
 * Run: node --import tsx bench/baseline/bare-provider.ts
 */
import type { Configuration } from 'oidc-provider';
import { serveBareProvider } from '../lib/bare-oidc.js';

// The library's own in-memory adapter and LRU, with room for every pre-minted token (its
// default store keeps 1,000 entries, fewer than a run consumes).
const { default: MemoryAdapter } = (await import('oidc-provider/lib/adapters/memory_adapter.js' as string)) as {
  default: new (model: string, store: unknown) => unknown;
};
const { default: LRU } = (await import('oidc-provider/lib/helpers/lru.js' as string)) as {
  default: new (options: { maxSize: number }) => unknown;
};
const store = new LRU({ maxSize: 2_000_000 });

await serveBareProvider({
  adapter: function AdapterFactory(model: string) {
    return new MemoryAdapter(model, store);
  } as unknown as Configuration['adapter'],
});
