import { Counter, type Registry } from 'prom-client';
import type { Environment } from '../db/schema.js';
import { unitOf } from '../oidc/request-scope.js';
import { afterUnitCommits } from '../oidc/unit-of-work.js';

const ENVIRONMENTS: readonly Environment[] = ['production', 'sandbox'];
const GRANT_TYPES: ReadonlySet<string> = new Set(['authorization_code', 'refresh_token', 'client_credentials']);
const ERROR_CODE = /^[a-z_]{1,48}$/;

/** The part of a provider these metrics use: its event emitter (oidc-provider's documented events). */
export interface ProviderEvents {
  on(event: 'grant.success', listener: (ctx: { state?: unknown; oidc?: { params?: { grant_type?: unknown } } }) => void): unknown;
  on(event: 'grant.error', listener: (ctx: unknown, error: { error?: unknown }) => void): unknown;
}

export interface ProviderSource {
  provider(environment: Environment): unknown;
}

/**
 * Token issuance and token-endpoint refusals, per environment. The counters are fed by the
 * providers' `grant.success` and `grant.error` events; `tokenIssued` and `tokenRefused` are
 * also callable directly. Refusals by our own checks before the token route are announced as
 * `grant.error` too (oidc/stack/token-endpoint.ts), so they are counted here. An issue counts once its
 * tokens are stored: one that loses its consume race is counted as the refusal it becomes.
 */
export class OAuthMetrics {
  private readonly issued: Counter<'environment' | 'grant_type'>;
  private readonly refused: Counter<'environment' | 'error'>;
  /** Providers already subscribed to: they are rebuilt when the signing keys rotate. */
  private readonly watched = new WeakSet<object>();

  constructor(
    registry: Registry,
    private readonly source: ProviderSource | undefined,
  ) {
    this.issued = new Counter({
      name: 'almoner_oauth_tokens_issued_total',
      help: 'Successful token-endpoint responses, by environment and grant type.',
      labelNames: ['environment', 'grant_type'],
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'almoner_oauth_token_errors_total',
      help: 'Token requests refused, by environment and OAuth error code.',
      labelNames: ['environment', 'error'],
      registers: [registry],
    });
    // Zero series from the start, so rate() and alerts see them before the first token.
    for (const environment of ENVIRONMENTS) {
      for (const grantType of ['authorization_code', 'refresh_token']) this.issued.inc({ environment, grant_type: grantType }, 0);
    }
  }

  tokenIssued(environment: Environment, grantType: unknown): void {
    this.issued.inc({ environment, grant_type: typeof grantType === 'string' && GRANT_TYPES.has(grantType) ? grantType : 'other' });
  }

  tokenRefused(environment: Environment, error: unknown): void {
    this.refused.inc({ environment, error: typeof error === 'string' && ERROR_CODE.test(error) ? error : 'other' });
  }

  /** Subscribes to the current providers' token events, once per provider instance. */
  watchProviders(): void {
    if (!this.source) return;
    for (const environment of ENVIRONMENTS) {
      const provider = this.source.provider(environment) as ProviderEvents & object;
      if (this.watched.has(provider)) continue;
      this.watched.add(provider);
      provider.on('grant.success', (ctx) => {
        const grantType = ctx?.oidc?.params?.grant_type;
        afterUnitCommits(unitOf(ctx), () => this.tokenIssued(environment, grantType));
      });
      provider.on('grant.error', (_ctx, error) => this.tokenRefused(environment, error?.error));
    }
  }
}
