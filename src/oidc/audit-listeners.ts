import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import { deleteBrowserSessionByUid } from '../identity/browser-sessions-repository.js';
import { recordAudit } from '../audit/audit-log.js';
import type { AuditEventKind } from '../audit/event-kinds.js';
import { addToRequestLine } from '../http/access-log.js';
import { isClientAbort } from '../http/client-abort.js';
import { claimedClientId } from '../http/basic-credentials.js';
import { revokeAuthorization } from '../authorizations/authorizations.js';
import { recordGrantRefusal } from './grant-refusals.js';
import { APP_ERROR_EVENT, logoutSessionOf, onProviderEvent, SERVER_ERROR_EVENT } from './provider-internals.js';
import { finishBeforeResponse, unitOf } from './request-scope.js';

/**
 * What we do when a provider announces an event: audit rows for issued tokens, revoked
 * authorizations (with the revocation's bookkeeping) and sign-outs, and logs for refused token requests
 * and provider errors. The library does not await its listeners, so work that must be done
 * before the answer leaves is handed to finishBeforeResponse (request-scope.ts).
 */
interface ListenerOptions {
  db: Db;
  environment: Environment;
  logger: Logger;
}

export function listenToProvider(provider: Provider, { db, environment, logger }: ListenerOptions): void {
  const auditEntry = (ctx: KoaContextWithOIDC | undefined, event: AuditEventKind, details: Record<string, unknown>) => ({
    event,
    environment,
    clientId: ctx?.oidc?.client?.clientId ?? null,
    ip: ctx?.ip ?? null,
    requestId: String(ctx?.res?.getHeader('x-request-id') ?? '') || null,
    details,
  });
  const audit = (ctx: KoaContextWithOIDC | undefined, event: AuditEventKind, details: Record<string, unknown>) => {
    const entry = auditEntry(ctx, event, details);
    // At the token endpoint the event commits with the tokens it records (unit-of-work.ts).
    const unit = unitOf(ctx);
    if (unit && event === 'token.issued') {
      unit.audits.push(entry);
      return;
    }
    finishBeforeResponse(
      ctx,
      recordAudit(db, entry).catch((error: Error) => logger.error({ err: error }, 'audit write failed')),
    );
  };
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => audit(ctx, 'token.issued', { grant_type: ctx.oidc.params?.grant_type }));
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    // The library does not await its listeners; the answer waits for this instead, so a
    // client told "revoked" never finds the authorization still live.
    const work = (async () => {
      const revoked = await revokeAuthorization(
        db,
        environment,
        grantId,
        ctx.oidc?.route === 'revocation' ? 'token_revoked' : 'replay_detected',
      );
      if (revoked)
        await recordAudit(
          db,
          auditEntry(ctx, ctx.oidc?.route === 'revocation' ? 'authorization.revoked' : 'refresh_token.reuse', { grant_id: grantId }),
        );
    })().catch((error: Error) => logger.error({ err: error }, 'grant revocation bookkeeping failed'));
    finishBeforeResponse(ctx, work);
  });
  // An application's sign-out that ended a signed-in session (docs/oauth.md, "Signing out from
  // an application"): the same event as the dashboard's own sign-out, with the application; the
  // session's record (docs/accounts.md, "Sessions") goes with the session.
  provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
    const session = ctx.oidc ? logoutSessionOf(ctx) : undefined;
    if (!ctx.oidc?.params?.logout || !session?.accountId) return;
    const entry = { ...auditEntry(ctx, 'logout', { via: 'end_session' }), actorUserId: session.accountId };
    const work = Promise.all([
      recordAudit(db, entry),
      session.uid ? deleteBrowserSessionByUid(db, environment, session.uid) : undefined,
    ]).then(() => undefined);
    finishBeforeResponse(
      ctx,
      work.catch((error: Error) => logger.error({ err: error }, 'audit write failed')),
    );
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error?: string; error_detail?: string }) => {
    // Heard before the answer leaves: tokenResponse turns it into the error_description.
    recordGrantRefusal(ctx, error);
    // The authenticated client, else the one the Basic credentials claim (a failed authentication).
    const clientId = ctx?.oidc?.client?.clientId ?? claimedClientId(ctx?.get?.('authorization') ?? '');
    // The request's own access-log line says why and for whom (docs/operations.md, "HTTP conventions").
    if (ctx?.res) addToRequestLine(ctx.res, { oauth_error: error.error, client_id: clientId });
    logger.info(
      { req_id: ctx?.res?.getHeader('x-request-id'), error: error.error, detail: error.error_detail, client_id: clientId },
      'token request refused',
    );
  });
  onProviderEvent(provider, SERVER_ERROR_EVENT, (ctx: KoaContextWithOIDC | undefined, error: Error) => {
    if (isClientAbort(error, ctx?.req)) return callerLeft(ctx, error);
    logger.error({ err: error }, 'oidc provider error');
  });
  // What escapes our middleware around the provider's routes (reading a token request's body,
  // stack/provider-stack.ts) reaches the provider's app as an 'error' event; with a listener of our
  // own, Koa prints nothing of its own to stderr.
  onProviderEvent(provider, APP_ERROR_EVENT, (error: Error, ctx: KoaContextWithOIDC | undefined) => {
    if (isClientAbort(error, ctx?.req)) return callerLeft(ctx, error);
    // What Koa would not print either: an error meant for the client, answered as such.
    if ((error as { expose?: unknown }).expose === true)
      return logger.debug({ req_id: ctx?.res?.getHeader('x-request-id'), reason: error.message }, 'oidc provider request refused');
    logger.error({ err: error, req_id: ctx?.res?.getHeader('x-request-id') }, 'oidc provider error');
  });
  // A caller that hung up mid-request: no failure of ours (docs/operations.md, "HTTP conventions").
  const callerLeft = (ctx: KoaContextWithOIDC | undefined, error: Error) =>
    logger.debug({ req_id: ctx?.res?.getHeader('x-request-id'), reason: error.message }, 'client closed the request');
}
