import type Provider from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { ConsumeConflictHandler } from './adapter.js';
import { authorizationPath, endSessionPath, endSessionPaths } from './routes.js';
import { authorizationRequest } from './middleware/authorization-request.js';
import { authenticationChallenge, basicClientAuthentication } from './middleware/challenge.js';
import { discoveryDocument } from './middleware/discovery.js';
import { endSessionPages } from './end-session-pages.js';
import { databaseOutage } from './middleware/database-outage.js';
import { introspectionResponse } from './middleware/introspection-response.js';
import { catchOAuthErrors } from './middleware/oauth-errors.js';
import { pushedAuthorizationRequest } from './middleware/pushed-authorization-request.js';
import { refreshGrace } from './middleware/refresh-grace.js';
import { refreshScope } from './middleware/refresh-scope.js';
import { signInRecord } from './middleware/sign-in-record.js';
import { tokenRequest } from './middleware/token-request.js';
import { tokenResponse } from './middleware/token-response.js';
import { slidingRefresh } from './middleware/sliding-refresh.js';
import { awaitResponseWork } from './middleware/response-work.js';
import { unitOfWork } from './middleware/unit-of-work.js';
import { API_ROUTES } from './routes.js';
import { BROWSER_REQUEST, TOKEN_REQUEST } from './unit-of-work.js';
import { oauthProblem, sendOAuthProblem } from '../http/problem.js';

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
  // Outside every middleware that answers 401, so each such answer gets its challenge.
  provider.use(authenticationChallenge(issuer));
  // Refusals before the provider's token route are announced as its own are (logs, metrics).
  const tokenRefused = (ctx: unknown, error: unknown) => void provider.emit('grant.error', ctx, error);
  provider.use(catchOAuthErrors(basicClientAuthentication(), (ctx, error) => (ctx.path === API_ROUTES.token ? tokenRefused(ctx, error) : undefined)));
  provider.use(catchOAuthErrors(authorizationRequest(provider, authorizationPath(environment))));
  provider.use(catchOAuthErrors(pushedAuthorizationRequest()));
  provider.use(catchOAuthErrors(tokenRequest(provider), tokenRefused));
  provider.use(catchOAuthErrors(refreshGrace(db, environment, grace), tokenRefused));
  provider.use(tokenResponse(db, environment));
  // After the provider has answered and the unit committed: a fapi2 refresh token's expiry slides.
  provider.use(slidingRefresh(db, environment));
  // One unit of work per request that enters the provider (unit-of-work.ts): the token and
  // introspection endpoints, the authorization endpoint and its resume, the end-session
  // endpoint and its routes. A browser request starts with one read of the Interaction its
  // resume URL names, the session its cookie names, and what they lead to. Inside refreshGrace
  // and tokenResponse: they see the answer to a lost consume race.
  const authorize = authorizationPath(environment);
  const endSession: ReadonlySet<string> = new Set(endSessionPaths(environment));
  const sessionCookie = provider.cookieName('session');
  provider.use(
    unitOfWork({
      db,
      environment,
      onConsumeConflict: options.onConsumeConflict,
      planFor: (ctx) => {
        if (ctx.method === 'POST' && (ctx.path === API_ROUTES.token || ctx.path === API_ROUTES.introspection)) return TOKEN_REQUEST;
        return ctx.path === authorize || ctx.path.startsWith(`${authorize}/`) || endSession.has(ctx.path) ? BROWSER_REQUEST : undefined;
      },
      hint: (ctx) => ({ interactionUid: ctx.path.startsWith(`${authorize}/`) ? ctx.path.slice(authorize.length + 1) : undefined, sessionId: ctx.cookies.get(sessionCookie, { signed: true }) }),
      // Reported as the provider reports its own storage failures (server_error, which
      // databaseOutage turns into a 503 while the database is down), not Koa's plain-text 500.
      onFailure: (ctx, error) => {
        (provider as unknown as NodeJS.EventEmitter).emit('server_error', ctx, error);
        sendOAuthProblem(ctx, oauthProblem(500, 'oops! something went wrong'), 'server_error');
      },
    }),
  );
  // Inside the unit: the record of a session signed in at the resume commits with the session.
  provider.use(signInRecord(db, environment, authorize));
  // Inside the unit: its read of the refresh token is the one the provider reuses.
  provider.use(refreshScope(provider));
  provider.use(introspectionResponse(db, environment));
  provider.use(discoveryDocument({ authorization: `${dashboardOrigin}${authorizationPath(environment)}`, endSession: `${dashboardOrigin}${endSessionPath(environment)}` }));
  // After the end-session route: a browser that is not signed in gets our page, not the library's.
  provider.use(endSessionPages(environment).replaceSignedOutForm());
}
