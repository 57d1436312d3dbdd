import type { Context, Middleware } from 'koa';
import type { ClientAdapter } from '../client-adapter.js';
import type { ClientSecretCache } from '../client-secret-cache.js';
// How the library reads them: provider-internals.ts (basicCredentials, VISIBLE_CREDENTIAL).
import { basicCredentials, VISIBLE_CREDENTIAL } from '../provider-internals.js';
import { unitOf } from '../request-scope.js';
import { recordVerifiedSecret } from '../verified-client-secret.js';
import { single, takeFormBody } from './raw-form.js';

/** What the check verifies with: the secret cache (and its failure limits) and the provider's client registrations. */
export interface ClientSecretVerifier {
  cache: ClientSecretCache;
  clients: ClientAdapter;
}

/** A client id and secret as a request presents them. */
export interface PresentedSecret {
  clientId: string;
  secret: string;
}

const SECRET_METHODS: ReadonlySet<unknown> = new Set(['client_secret_basic', 'client_secret_post']);

/**
 * The client secret a request presents, when it presents exactly one: by HTTP Basic, or by
 * `client_id` and `client_secret` in the form (RFC 6749 2.3.1). A secret both ways, a repeated
 * parameter, or anything the library would read otherwise is none, and is then refused.
 */
export function presentedSecret(authorization: string | undefined, form: Record<string, unknown> | undefined): PresentedSecret | undefined {
  const inForm = form?.client_secret !== undefined;
  if (authorization !== undefined && authorization !== '') return inForm ? undefined : basicCredentials(authorization);
  if (!inForm) return undefined;
  const clientId = single(form!.client_id as string | string[] | undefined);
  const secret = single(form!.client_secret as string | string[] | undefined);
  return clientId && secret && VISIBLE_CREDENTIAL.test(clientId) && VISIBLE_CREDENTIAL.test(secret) ? { clientId, secret } : undefined;
}

const storedSecretOf = (registration: Record<string, unknown> | undefined): string | undefined =>
  typeof registration?.client_secret === 'string' ? registration.client_secret : undefined;

/**
 * Whether `secret` is the client's: checked through the cache (whose failure limits key on
 * `source`) against the registration as read, then once more against a freshly read one, since
 * a registration read before a rotation in another process must not refuse the new secret.
 */
export async function verifyClientSecret(
  verifier: ClientSecretVerifier,
  clientId: string,
  secret: string,
  source: string,
): Promise<boolean> {
  const registration = await verifier.clients.find(clientId);
  if (!registration || !SECRET_METHODS.has(registration.token_endpoint_auth_method)) return false;
  const stored = storedSecretOf(registration);
  if (stored && (await verifier.cache.verify(clientId, stored, secret, source))) return true;
  const current = storedSecretOf(await verifier.clients.reload(clientId));
  if (!current || current === stored) return false;
  return verifier.cache.verify(clientId, current, secret, source);
}

/**
 * Where the provider authenticates a client by its secret (token, introspection, revocation,
 * pushed requests), inside the request's unit of work: the secret the request presents is
 * verified here, and what verified is recorded on the unit's caller. The provider's own check
 * (provider-internals.ts, compareClientSecret) then only compares with that record, so it is
 * synchronous; a secret this step did not verify (none presented, presented twice, or read
 * differently by the library) is refused there (docs/oauth.md, "OAuth 2.0 and OpenID Connect",
 * Client authentication). A wrong secret records nothing: the provider answers it as its own.
 * A registration that cannot be read is `onFailure`'s, answered as the provider answers its
 * own storage failures (503 while the database is down), as when the provider read it.
 */
export function clientSecretCheck(verifier: ClientSecretVerifier, onFailure: (ctx: Context, error: unknown) => void): Middleware {
  return async (ctx, next) => {
    const unit = unitOf(ctx);
    if (ctx.method === 'POST' && unit && unit.plan.kind !== 'browser') {
      const presented = presentedSecret(ctx.get('authorization'), await takeFormBody(ctx));
      if (presented) {
        let verified: boolean;
        try {
          verified = await verifyClientSecret(verifier, presented.clientId, presented.secret, unit.caller.address);
        } catch (error) {
          return onFailure(ctx, error);
        }
        if (verified) recordVerifiedSecret(unit.caller, presented.clientId, presented.secret);
      }
    }
    await next();
  };
}
