import type Provider from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { ConsumeConflictHandler } from './adapter.js';
import { authorizationPath } from './routes.js';
import { authorizationRequest } from './middleware/authorization-request.js';
import { authenticationChallenge, basicClientAuthentication } from './middleware/challenge.js';
import { discoveryDocument } from './middleware/discovery.js';
import { databaseOutage } from './middleware/database-outage.js';
import { introspectionResponse } from './middleware/introspection-response.js';
import { catchOAuthErrors } from './middleware/oauth-errors.js';
import { refreshGrace } from './middleware/refresh-grace.js';
import { refreshScope } from './middleware/refresh-scope.js';
import { tokenRequest } from './middleware/token-request.js';
import { tokenResponse } from './middleware/token-response.js';
import { tokenUnit } from './middleware/token-endpoint-unit.js';
import { awaitResponseWork } from './middleware/response-work.js';
import { asProviderFailure, requestUnit } from './middleware/request-unit.js';

/**
 * Our middleware around a provider's own routes, outermost first. The order is the design:
 * each comment says why a middleware sits where it does. Every middleware is one check in
 * middleware/.
 */
interface StackOptions {
  db: Db;
  environment: Environment;
  issuer: string;
  dashboardOrigin: string;
  refreshGraceSeconds: number;
  onConsumeConflict: ConsumeConflictHandler;
}

export function stackMiddleware(provider: Provider, options: StackOptions): void {
  const { db, environment, issuer, dashboardOrigin } = options;
  const grace = options.refreshGraceSeconds;
  provider.use(awaitResponseWork());
  provider.use(databaseOutage(provider));
  // The authorization endpoint and its resume: one write of the provider's rows per request.
  const authorize = authorizationPath(environment);
  // It starts with one read of the Interaction its resume URL names, the session its cookie names, and what they lead to.
  const sessionCookie = provider.cookieName('session');
  provider.use(
    asProviderFailure(
      provider,
      requestUnit(db, {
        applies: (ctx) => ctx.path === authorize || ctx.path.startsWith(`${authorize}/`),
        firstRead: {
          environment,
          hint: (ctx) => ({ interactionUid: ctx.path.startsWith(`${authorize}/`) ? ctx.path.slice(authorize.length + 1) : undefined, sessionId: ctx.cookies.get(sessionCookie, { signed: true }) }),
        },
      }),
    ),
  );
  // Outside every middleware that answers 401, so each such answer gets its challenge.
  provider.use(authenticationChallenge(issuer));
  provider.use(catchOAuthErrors(basicClientAuthentication()));
  provider.use(catchOAuthErrors(authorizationRequest(provider, authorizationPath(environment))));
  // Refusals before the provider's token route are announced as its own are (logs, metrics).
  const tokenRefused = (ctx: unknown, error: unknown) => void provider.emit('grant.error', ctx, error);
  provider.use(catchOAuthErrors(tokenRequest(provider), tokenRefused));
  provider.use(catchOAuthErrors(refreshGrace(db, environment, grace), tokenRefused));
  provider.use(tokenResponse(db, environment));
  // Inside refreshGrace and tokenResponse: they see the answer to a lost consume race.
  provider.use(tokenUnit({ db, environment, onConsumeConflict: options.onConsumeConflict, refreshGraceSeconds: grace }));
  // Inside tokenUnit: its read of the refresh token is the one the provider reuses.
  provider.use(refreshScope(provider));
  provider.use(introspectionResponse(db, environment));
  provider.use(discoveryDocument(`${dashboardOrigin}${authorizationPath(environment)}`));
}
