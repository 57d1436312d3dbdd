import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { sendServerError } from '../../http/oauth-problem.js';
import type { ConsumeConflictHandler } from '../adapter.js';
import { authorizationPath, endSessionPath, endSessionPaths, API_ROUTES } from '../routes.js';
import { BROWSER_REQUEST, CLIENT_REQUEST, TOKEN_REQUEST } from '../unit-of-work.js';
import { emitServerError, sessionIdOfRequest } from '../provider-internals.js';
import { endSessionPages } from '../end-session-pages.js';
import { authorizationRequest } from '../middleware/authorization-request.js';
import { authenticationChallenge, clientAuthentication } from '../middleware/challenge.js';
import { discoveryDocument } from '../middleware/discovery.js';
import { dpopProofCheck } from '../middleware/dpop-proof-check.js';
import { refuseBrowserRequests } from '../middleware/browser-requests.js';
import { databaseOutage } from '../middleware/database-outage.js';
import { introspectionResponse } from '../middleware/introspection-response.js';
import { catchOAuthErrors, recordRefusals } from '../middleware/oauth-errors.js';
import { clientSecretCheck, type ClientSecretVerifier } from '../middleware/client-secret-check.js';
import { pushedAuthorizationRequest } from '../middleware/pushed-authorization-request.js';
import { requestUriBrowser } from '../middleware/request-uri-browser.js';
import { signInRecord } from '../middleware/sign-in-record.js';
import { awaitResponseWork } from '../middleware/response-work.js';
import { unitOfWork } from '../middleware/unit-of-work.js';
import { checksStep } from '../middleware/steps.js';
import { tokenEndpoint } from './token-endpoint.js';

/**
 * Our middleware around a provider's own routes, outermost first. The order is the design:
 * each comment says why a middleware sits where it does. Every middleware is one check in
 * middleware/; the token endpoint's are one chain of its own (token-endpoint.ts).
 */
interface StackOptions {
  db: Db;
  environment: Environment;
  issuer: string;
  dashboardOrigin: string;
  refreshGraceSeconds: number;
  onConsumeConflict: ConsumeConflictHandler;
  /** What the client-secret check verifies with: the provider's own client registrations (middleware/client-secret-check.ts). */
  clientSecrets: ClientSecretVerifier;
}

export function stackMiddleware(provider: Provider, options: StackOptions): void {
  const { db, environment, issuer } = options;
  // A failed read or commit of a unit of work is reported as the provider reports its own storage
  // failures (server_error, which databaseOutage turns into a 503 while the database is down), not Koa's plain-text 500.
  const onFailure = (ctx: Context, error: unknown) => {
    emitServerError(provider, ctx, error);
    sendServerError(ctx);
  };
  // What the provider's routes refuse is kept as the request's refusal (the challenge and the token endpoint's answer build on it).
  recordRefusals(provider);
  provider.use(awaitResponseWork());
  provider.use(databaseOutage(provider));
  // Outside every middleware that answers 401, so each such answer gets its challenge.
  provider.use(authenticationChallenge(issuer));
  // The token endpoint: its own chain, behind this one check; every other request takes the other endpoints' chain.
  const token = tokenEndpoint(provider, {
    db,
    environment,
    refreshGraceSeconds: options.refreshGraceSeconds,
    onConsumeConflict: options.onConsumeConflict,
    clientSecrets: options.clientSecrets,
    onFailure,
  });
  const others = otherEndpoints(provider, options, onFailure);
  provider.use((ctx, next) => (ctx.method === 'POST' && ctx.path === API_ROUTES.token ? token(ctx, next) : others(ctx, next)));
}

/** Every endpoint but the token endpoint: each middleware serves the endpoints it names. */
function otherEndpoints(provider: Provider, options: StackOptions, onFailure: (ctx: Context, error: unknown) => void): Middleware {
  const { db, environment, dashboardOrigin } = options;
  // One unit of work per request that enters the provider (unit-of-work.ts): the introspection
  // endpoint; revocation and pushed requests, whose unit only carries the caller to the
  // client-secret check; the authorization endpoint and its resume, the end-session endpoint
  // and its routes. A browser request starts with one read of the Interaction its resume URL
  // names, the session its cookie names, and what they lead to.
  const authorize = authorizationPath(environment);
  const endSession: ReadonlySet<string> = new Set(endSessionPaths(environment));
  return compose([
    // Introspection, revocation and pushed requests from a web page are told to call from a backend, in an answer it may read.
    catchOAuthErrors(checksStep(refuseBrowserRequests())),
    catchOAuthErrors(clientAuthentication()),
    catchOAuthErrors(authorizationRequest(provider, authorize)),
    // A pushed request's request_uri is the first browser's to open (before the provider starts a sign-in for another).
    requestUriBrowser(db, environment, authorize, dashboardOrigin.startsWith('https:')),
    catchOAuthErrors(pushedAuthorizationRequest()),
    // Pushed requests and UserInfo: a DPoP proof is judged on its face (form, type, key, age) before the provider verifies it.
    catchOAuthErrors(checksStep(dpopProofCheck(options.issuer))),
    unitOfWork({
      db,
      environment,
      onConsumeConflict: options.onConsumeConflict,
      planFor: (ctx) => {
        if (ctx.method === 'POST' && ctx.path === API_ROUTES.introspection) return TOKEN_REQUEST;
        if (ctx.method === 'POST' && (ctx.path === API_ROUTES.revocation || ctx.path === API_ROUTES.pushedAuthorization))
          return CLIENT_REQUEST;
        return ctx.path === authorize || ctx.path.startsWith(`${authorize}/`) || endSession.has(ctx.path) ? BROWSER_REQUEST : undefined;
      },
      hint: (ctx) => ({
        interactionUid: ctx.path.startsWith(`${authorize}/`) ? ctx.path.slice(authorize.length + 1) : undefined,
        sessionId: sessionIdOfRequest(provider, ctx),
      }),
      onFailure,
    }),
    // Inside the unit, which carries the outcome to the provider's own check: a client secret presented at introspection, revocation or a pushed request is verified here.
    catchOAuthErrors(clientSecretCheck(options.clientSecrets, onFailure)),
    // Inside the unit: the record of a session signed in at the resume commits with the session.
    signInRecord(db, environment, authorize),
    introspectionResponse(db, environment),
    discoveryDocument({ authorization: `${dashboardOrigin}${authorize}`, endSession: `${dashboardOrigin}${endSessionPath(environment)}` }),
    // After the end-session route: a browser that is not signed in gets our page, not the library's.
    endSessionPages(environment).replaceSignedOutForm(),
  ]);
}
