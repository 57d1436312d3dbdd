import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { Db } from '../db/database.js';
import { donationRoutes } from './donations/routes.js';
import { grantRoutes } from './grants/routes.js';
import { connectRoutes } from './giving/connects-routes.js';
import { dafRoutes } from './giving/dafs-routes.js';
import { grantCaptureRoutes } from './giving/grant-capture-routes.js';
import { grantSimulationRoutes } from './giving/grant-simulation-routes.js';
import { recurringUnintegratedRoutes } from './giving/recurring-unintegrated-routes.js';
import { nonprofitRoutes } from './nonprofits/routes.js';
import { organizationRoutes } from './organizations/routes.js';
import { suggestionRoutes } from './organizations/suggestion-routes.js';
import { verificationRequestRoutes } from './organizations/verification-routes.js';
import { donorAccountRoutes } from './daf/donor-accounts-routes.js';
import { tokenRoutes } from './daf/tokens-routes.js';
import { givingPoolRoutes, grantRequestRoutes } from './daf/pools-requests-routes.js';
import { eventRoutes } from './events/routes.js';
import { fdxProblems } from './fdx/errors.js';
import { fdxRoutes } from './fdx/routes.js';
import { disbursementRoutes } from './grantmaking/disbursements-routes.js';
import { financialAccountRoutes } from './grantmaking/financial-accounts-routes.js';
import { inboundTransferRoutes } from './grantmaking/inbound-transfers-routes.js';
import { programRoutes } from './grantmaking/programs-routes.js';
import { mailboxRoutes } from './gift-processing/mailbox-routes.js';
import { isMailboxUpload, mailboxUploadRoute } from './gift-processing/mailbox-upload-routes.js';
import { depositRoutes } from './gift-processing/deposits-routes.js';
import { lockboxRoutes } from './gift-processing/lockboxes-routes.js';
import { mailItemRoutes } from './gift-processing/mail-items-routes.js';
import { paymentSourceRoutes } from './gift-processing/payment-sources-routes.js';
import { propertyRoutes } from './gift-processing/properties-routes.js';
import { buildOpenApiDocument } from './openapi.js';
import type { GatewayServices, RouteSpec } from './routing/route-spec.js';
import { DEFAULT_MAIL_BATCH_MAX_BYTES } from '../gift-processing/upload-service.js';
import { buildGatewayRouter } from './router.js';
import { apiVersion, DEFAULT_API_VERSION, type ApiVersion } from './routing/versions.js';

/** Every gateway operation; later areas (FDX, DAF) add theirs. */
export const GATEWAY_ROUTES: readonly RouteSpec[] = [
  ...donationRoutes,
  ...grantRoutes,
  ...grantCaptureRoutes,
  ...grantSimulationRoutes,
  ...connectRoutes,
  ...dafRoutes,
  ...recurringUnintegratedRoutes,
  ...nonprofitRoutes,
  ...organizationRoutes,
  ...verificationRequestRoutes,
  ...suggestionRoutes,
  ...donorAccountRoutes,
  ...tokenRoutes,
  ...givingPoolRoutes,
  ...grantRequestRoutes,
  ...eventRoutes,
  ...fdxRoutes,
  ...financialAccountRoutes,
  ...programRoutes,
  ...inboundTransferRoutes,
  ...disbursementRoutes,
  ...mailboxRoutes,
  ...paymentSourceRoutes,
  ...lockboxRoutes,
  ...mailItemRoutes,
  ...depositRoutes,
  ...propertyRoutes,
] as unknown as RouteSpec[];

export interface GatewayDeps {
  db: Db;
  services: GatewayServices;
  origin: string;
  ipRestrictedAreas: readonly string[];
}

function pathVersion(): Middleware {
  return async (ctx, next) => {
    ctx.state.apiVersion = DEFAULT_API_VERSION;
    await next();
  };
}

/** The resource gateway of one API host: /v1 and /fdx/v6 operations, and /openapi.json. */
export function buildGateway(deps: GatewayDeps): Middleware {
  const router = buildGatewayRouter(GATEWAY_ROUTES, { db: deps.db, services: deps.services, ipRestrictedAreas: deps.ipRestrictedAreas });
  const versioned = compose([apiVersion(), router]);
  // FDX is versioned by its path: Api-Version is neither required nor echoed there, and the
  // FDX routes (which exist under every header version) see the default.
  const fdx = compose([fdxProblems(), pathVersion(), router]);
  const docs = new Router();
  const cache = new Map<string, unknown>();
  docs.get('/openapi.json', apiVersion(), (ctx) => {
    const version = ctx.state.apiVersion as ApiVersion;
    if (!cache.has(version)) cache.set(version, buildOpenApiDocument(GATEWAY_ROUTES, version, deps.origin));
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = cache.get(version);
  });
  const docsRoutes = docs.routes() as unknown as Middleware;
  const uploads = mailboxUploadRoute({
    db: deps.db,
    storage: deps.services.storage,
    maxBytes: deps.services.mailBatchMaxBytes ?? DEFAULT_MAIL_BATCH_MAX_BYTES,
  });
  return async (ctx, next) => {
    // The folder storage's upload URLs: signed, so before the API key and Api-Version checks (and no body parser).
    if (isMailboxUpload(ctx.path)) return uploads(ctx, next);
    if (ctx.path === '/v1' || ctx.path.startsWith('/v1/')) return versioned(ctx, next);
    if (ctx.path === '/fdx/v6' || ctx.path.startsWith('/fdx/v6/')) return fdx(ctx, next);
    return docsRoutes(ctx, next);
  };
}
