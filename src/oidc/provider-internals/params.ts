import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * Replaces the authorization request's scope in ctx.oidc.params during its checks (an
 * extraParams validator, requested-scopes.ts). The library does not invite the mutation: it
 * relies on lib/actions/authorization/ reading `ctx.oidc.params.scope` again after the
 * validators (check_scope.js, interactions.js, the Interaction's params), and on params being
 * a writable object. Tripwire: test/oidc/provider-internals.test.ts ("ctx.oidc.params.scope:
 * what a validator writes is what the authorization then uses").
 */
export function setRequestedScope(ctx: KoaContextWithOIDC, scope: string): void {
  (ctx.oidc.params as Record<string, unknown>).scope = scope;
}
