import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { proofOfLoginResult, recordSignIn } from '../../identity/sessions.js';
import { interactionLoginOf } from '../provider-internals.js';
import { unitOf } from '../request-scope.js';
import { writeWithUnit } from '../unit-of-work.js';

/**
 * The authorization endpoint's resume, around the provider: when the interaction's result
 * signed the user in (a password, a second factor, a passkey, a step-up), the provider's
 * session now holds that sign-in, and our record of the session (identity/sessions.ts) is
 * written with the request's unit, so the session is bound to the credentials epoch its
 * sign-in was proven under (docs/accounts.md, "Sessions"). The result's epoch was checked
 * when the request's first read found the interaction (a stale one is read as absent).
 */
export function signInRecord(db: Db, environment: Environment, authorizationPath: string): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${authorizationPath}/`)) return next();
    await next();
    const oidc = (ctx as unknown as KoaContextWithOIDC).oidc;
    const proof = proofOfLoginResult(interactionLoginOf(ctx as unknown as KoaContextWithOIDC));
    const session = oidc?.session;
    if (!proof || !session?.uid || session.accountId !== proof.userId) return;
    const place = { ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
    await writeWithUnit(unitOf(ctx), db, (trx) => recordSignIn(trx, environment, session.uid, proof, place));
  };
}
