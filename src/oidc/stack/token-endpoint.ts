import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import type { ConsumeConflictHandler } from '../adapter.js';
import { oidcState } from '../request-scope.js';
import { TOKEN_REQUEST } from '../unit-of-work.js';
import { answerRefusals } from '../middleware/oauth-errors.js';
import { readForm } from '../middleware/raw-form.js';
import { dpopProofCheck } from '../middleware/dpop-proof-check.js';
import { refuseBrowserRequests } from '../middleware/browser-requests.js';
import {
  clientCredentialsWithoutScope,
  redirectUriFromCode,
  requireClientAuthentication,
  singleAuthorizationHeader,
  wellFormedBasicCredentials,
  wellFormedCodeExchange,
} from '../middleware/token-request.js';
import { replayGraceSuccessor, sealGraceSuccessor } from '../middleware/refresh-grace.js';
import { answerTokenRefusal, shapeTokenResponse } from '../middleware/token-response.js';
import { slidingRefresh } from '../middleware/sliding-refresh.js';
import { activateConsentOnExchange } from '../middleware/consent-activation.js';
import { unitOfWork } from '../middleware/unit-of-work.js';
import { answerSteps, checksStep, type RequestCheck } from '../middleware/steps.js';
import { clientSecretCheck, type ClientSecretVerifier } from '../middleware/client-secret-check.js';
import { refreshScope } from '../middleware/refresh-scope.js';

export interface TokenEndpointOptions {
  db: Db;
  environment: Environment;
  refreshGraceSeconds: number;
  onConsumeConflict: ConsumeConflictHandler;
  /** What the client-secret check verifies with (middleware/client-secret-check.ts). */
  clientSecrets: ClientSecretVerifier;
  /** A failed read or commit of the unit, answered as the provider answers its own storage failures (provider-stack.ts). */
  onFailure: (ctx: Parameters<Middleware>[0], error: unknown) => void;
}

/**
 * The token endpoint (POST, API_ROUTES.token), around the provider's own token route: our steps,
 * outermost first, in the order they run before the provider; the ones marked "after" act on
 * its answer on the way out (innermost first). Mounted once, behind the one check of method and
 * path (provider-stack.ts), so no step looks at the path again; every step reads the form from
 * ctx.state.oidc.form, read once by readForm.
 *
 * Synchronous checks of the request run as one step (checksStep) and adjacent after-steps as one
 * (answerSteps), in the order they ran as middlewares of their own: fewer async middlewares per
 * request (middleware/steps.ts says why each is the same).
 */
export function tokenEndpoint(provider: Provider, options: TokenEndpointOptions): Middleware {
  const { db, environment } = options;
  const grace = options.refreshGraceSeconds;
  return compose([
    // Refusals raised by the steps below, before the provider, are answered as the provider answers its own and announced as its own are (grant.error: logs, metrics).
    answerRefusals((ctx, error) => void provider.emit('grant.error', ctx, error)),
    checksStep(
      // A 401 here carries a Basic challenge. First, before any check may refuse; answerRefusals does nothing before the steps below run, so this marks as early as above it.
      markClientAuthenticated,
      // A web page (a request with an Origin) is told to call from its backend, in an answer it may read.
      refuseBrowserRequests(),
      // Several Authorization headers name no one client: invalid_request, before anything is read.
      singleAuthorizationHeader(),
      // A Basic value that is not base64 of `id:secret` is invalid_client (401), whatever the body.
      wellFormedBasicCredentials(),
    ),
    // The form, read once into ctx.state.oidc.form; the provider later reads the same bytes.
    readForm(),
    checksStep(
      // HTTP Basic or a client assertion, never a secret in the body: otherwise invalid_client (401).
      requireClientAuthentication(),
      // A DPoP proof of the wrong form, type, key or age is invalid_dpop_proof (400), saying which rule, before the provider judges it.
      dpopProofCheck(provider.issuer),
      // A client-credentials token serves the FDX Consent API only: a scope is invalid_scope.
      clientCredentialsWithoutScope(),
      // A missing or malformed code or code_verifier is 400 before the code is looked up.
      wellFormedCodeExchange(),
    ),
    // redirect_uri comes from the code, so clients need not send it.
    redirectUriFromCode(provider),
    // After, outside the unit, in the order they act (innermost first, each on the answer as the
    // one before left it); none keeps a try/finally, so a throw skips the ones after it, as it
    // skipped the outer middlewares' after-code when each was one (middleware/steps.ts).
    answerSteps(
      // After the unit committed: a fapi2 refresh token's expiry slides.
      slidingRefresh(db, environment),
      // A refusal gets our status and code (http/oauth-problem.ts): invalid_grant 401 and why, unauthorized_client.
      answerTokenRefusal(db, environment),
      // A duplicate refresh inside the grace window that lost its consume race gets the first use's pair.
      replayGraceSuccessor(db, environment, grace),
    ),
    // The request's unit of work: one read of the presented token with its Grant and authorization, one write of all it hands out.
    unitOfWork({
      db,
      environment,
      onConsumeConflict: options.onConsumeConflict,
      planFor: () => TOKEN_REQUEST,
      onFailure: options.onFailure,
    }),
    // Inside the unit, which carries the outcome to the provider's own check: the HTTP Basic secret is verified here (argon2, through the cache and its failure limits).
    clientSecretCheck(options.clientSecrets, options.onFailure),
    // After, inside the unit, in the order they act (innermost first; none keeps a try/finally either).
    answerSteps(
      // A code's FDX consent becomes ACTIVE (and replaces the recipient's earlier one) with the exchange.
      activateConsentOnExchange(db, environment),
      // The answer's scope narrowed to the approver's role, an FDX consent's detail added.
      shapeTokenResponse(db, environment),
      // A refresh's answer, as shaped just before, is sealed into the unit's commit, so it commits with the rotation.
      sealGraceSuccessor(environment, grace),
    ),
    // Inside the unit, before the provider: offline_access asked again on refresh is dropped when the token lacks it.
    refreshScope(provider),
  ]);
}

/** Every request here is one where the client authenticates: a 401's challenge is Basic (middleware/challenge.ts). */
function markClientAuthenticated(ctx: Parameters<RequestCheck>[0]): void {
  oidcState(ctx).clientAuthenticates = true;
}
