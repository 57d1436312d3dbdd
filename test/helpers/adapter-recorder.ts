import { PostgresAdapter, type AdapterPayload } from '../../src/oidc/adapter.js';

/** One call the provider made to its storage adapter (src/oidc/adapter.ts). */
export interface AdapterCall {
  model: string;
  method: 'find' | 'findByUid' | 'upsert' | 'consume' | 'destroy' | 'revokeByGrantId';
  /** What an upsert saved (a copy, as the library handed it over). */
  payload?: AdapterPayload;
}

const METHODS = ['find', 'findByUid', 'upsert', 'consume', 'destroy', 'revokeByGrantId'] as const;

/**
 * Records, in order, every call the provider makes to the real Postgres adapter of this
 * process: each call still goes to the adapter (and the database) as it would. `start()` wraps
 * the adapter's methods, `stop()` restores them; `take()` hands over what was recorded since the
 * last take. For the seam's tripwires (test/oidc/provider-internals.test.ts, provider-call-order.test.ts).
 */
export class AdapterRecorder {
  private calls: AdapterCall[] = [];
  private originals: Partial<Record<(typeof METHODS)[number], unknown>> = {};

  start(): void {
    const prototype = PostgresAdapter.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const calls = () => this.calls;
    for (const method of METHODS) {
      const original = prototype[method]!;
      this.originals[method] = original;
      prototype[method] = function recorded(this: { model: string }, ...args: unknown[]) {
        const call: AdapterCall = { model: this.model, method };
        if (method === 'upsert') call.payload = structuredClone(args[1]) as AdapterPayload;
        calls().push(call);
        return original.apply(this, args);
      };
    }
  }

  stop(): void {
    const prototype = PostgresAdapter.prototype as unknown as Record<string, unknown>;
    for (const [method, original] of Object.entries(this.originals)) prototype[method] = original;
    this.originals = {};
  }

  take(): AdapterCall[] {
    const calls = this.calls;
    this.calls = [];
    return calls;
  }
}

/** The calls as `Model.method` strings, in order. */
export const sequence = (calls: AdapterCall[]) => calls.map((c) => `${c.model}.${c.method}`);
