import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { ObjectStorage } from '../storage/object-storage.js';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { passwordParamsFrom } from '../accounts/passwords.js';
import type { AppConfig } from '../config/schema.js';
import { VIEWS_DIR } from '../config/paths.js';
import type { Db } from '../db/database.js';
import type { HostTarget } from '../http/hosts.js';
import { refuseCrossSitePosts } from '../http/csrf.js';
import { htmlErrorPages } from '../http/error-handler.js';
import { LoginThrottle } from '../identity/login-throttle.js';
import { buildInteractionRouter } from '../oidc/interactions/routes.js';
import { buildDashboardRouter } from '../dashboard/routes.js';
import { buildDonorFlowRouter } from '../donor-flow/routes.js';
import type { DashboardDeps } from '../dashboard/deps.js';
import { dashboardErrorLayout, framedNotFound } from '../dashboard/error-page.js';
import type { SecretBox } from '../keys/secret-box.js';
import { AttemptCounter } from '../limits/attempt-counter.js';
import type { MailSender } from '../mail/sender.js';
import type { BackgroundWork } from '../http/background-work.js';
import { SignIn } from '../identity/sign-in.js';
import type { ServerKeys } from '../keys/server-keys.js';
import { dashboardOidcRoutes } from '../oidc/stack/mount.js';
import { authorizationPath, INTERACTION_PREFIX } from '../oidc/routes.js';
import type { ProviderLifecycle } from '../oidc/stack/provider-lifecycle.js';
import { composeRouter } from './api-app.js';
import { buildApiReferenceRouter } from './api-reference.js';
import { errorPageLayout } from '../views/page.js';

const STYLESHEET = fs.readFileSync(path.join(VIEWS_DIR, 'static', 'almoner.css'));
/** Every page's icon (views/layout.njk, the API reference), so browsers ask for no /favicon.ico. */
const FAVICON = fs.readFileSync(path.join(VIEWS_DIR, 'static', 'favicon.svg'));
/** The pages' scripts: the passkey pages' (docs/security.md, "Passkeys"), the installed @simplewebauthn/browser build (no CDN) and ours; the sign-out pages' one. */
const WEBAUTHN_BUNDLE = path.resolve(
  path.dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')),
  '..',
  'dist',
  'bundle',
  'index.umd.min.js',
);
const SCRIPTS: Record<string, Buffer> = {
  '/static/simplewebauthn-browser.js': fs.readFileSync(WEBAUTHN_BUNDLE),
  '/static/passkeys.js': fs.readFileSync(path.join(VIEWS_DIR, 'static', 'passkeys.js')),
  /** The sign-out pages that need no decision (docs/oauth.md, "Signing out from an application"). */
  '/static/auto-submit.js': fs.readFileSync(path.join(VIEWS_DIR, 'static', 'auto-submit.js')),
  /** The donor flow's pages (docs/giving.md, "Security of the flow"): the message to the opener, "Done". */
  '/static/donor-flow.js': fs.readFileSync(path.join(VIEWS_DIR, 'static', 'donor-flow.js')),
};

export interface DashboardAppDeps {
  db: Db;
  oidc: ProviderLifecycle;
  /** The rotating server keys (CSRF tokens, the throttle's and the audit's keyed hashes). */
  serverKeys: ServerKeys;
  /** Outgoing mail (invitations, password resets, second-factor notices). */
  mail: MailSender;
  /** Encryption at rest (second-factor secrets). */
  box: SecretBox;
  /** Work run after a response (password-reset requests, notice mail). */
  background: BackgroundWork;
  /** Object storage: the scans of mail items. */
  storage: ObjectStorage;
  /** Password hashing parameters; the API hosts' origins (the API reference); both dashboards' origins (links in e-mail). */
  config: Pick<
    AppConfig,
    | 'password_memory_kib'
    | 'password_time_cost'
    | 'password_parallelism'
    | 'base_url'
    | 'sandbox_base_url'
    | 'dashboard_url'
    | 'sandbox_dashboard_url'
    | 'profile'
    | 'passkey_rp_id'
  >;
}

/**
 * On a dev alias (hosts.ts, withDevAliases), the authorization flow stays at the configured
 * URL, where its cookies and the clients' registered addresses are: the authorization
 * endpoint and the flow's pages send the browser there, same path and query (307 keeps the
 * method).
 */
function flowAtConfiguredOrigin(configured: string, environment: HostTarget['environment']): Middleware {
  const prefixes = [authorizationPath(environment), INTERACTION_PREFIX];
  return async (ctx, next) => {
    if (!prefixes.some((prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`))) return next();
    ctx.status = 307;
    ctx.redirect(`${configured}${ctx.path}${ctx.search}`);
  };
}

/**
 * The dashboard host of one environment: the authorization endpoint, the hosted sign-in,
 * nonprofit choice and consent, the signed-in dashboard (account, connected applications,
 * organization pages), and the API reference. A dev alias of it serves the same dashboard at
 * its own origin, the authorization flow excepted.
 */
export function buildDashboardApp(target: HostTarget, deps: DashboardAppDeps): Middleware {
  const router = new Router();
  router.get('/', (ctx) => {
    // A person's browser goes to their account (or the sign-in page); a program gets the host's description.
    if (ctx.accepts('json', 'html') === 'html') {
      ctx.status = 303;
      ctx.redirect('/account');
      return;
    }
    ctx.body = {
      service: 'almoner',
      surface: 'dashboard',
      environment: target.environment,
      dashboard_url: target.aliasOf ?? target.origin,
    };
  });
  router.get('/static/almoner.css', (ctx) => {
    ctx.type = 'text/css';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });
  router.get('/static/favicon.svg', (ctx) => {
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = FAVICON;
  });
  for (const [file, body] of Object.entries(SCRIPTS)) {
    router.get(file, (ctx) => {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = body;
    });
  }
  const passwordParams = passwordParamsFrom(deps.config);
  const pageDeps: DashboardDeps = {
    db: deps.db,
    environment: target.environment,
    origin: target.origin,
    provider: (): Provider => deps.oidc.provider(target.environment),
    serverKeys: deps.serverKeys,
    // Throttling state is in Postgres, so both dashboards (and every process) share it.
    signIn: new SignIn(deps.db, new LoginThrottle(deps.db, undefined, deps.serverKeys), passwordParams, deps.serverKeys),
    mail: deps.mail,
    passwordParams,
    counter: new AttemptCounter(deps.db, deps.serverKeys),
    box: deps.box,
    dashboardOrigins: { production: deps.config.dashboard_url, sandbox: deps.config.sandbox_dashboard_url },
    profile: deps.config.profile,
    background: deps.background,
    storage: deps.storage,
    // A dev alias is at a loopback name: passkeys there have it as their RP ID.
    passkeyRpId: target.aliasOf ? undefined : deps.config.passkey_rp_id,
    passkeysAt: target.alias,
  };
  return compose([
    htmlErrorPages(dashboardErrorLayout(pageDeps, errorPageLayout(target.environment))),
    // Before the provider too: its end-session confirmation is a form post of this host.
    refuseCrossSitePosts(target.origin),
    target.aliasOf ? flowAtConfiguredOrigin(target.aliasOf, target.environment) : dashboardOidcRoutes(deps.oidc, target),
    framedNotFound(pageDeps),
    composeRouter(buildInteractionRouter(pageDeps)),
    composeRouter(buildDashboardRouter(pageDeps)),
    composeRouter(buildDonorFlowRouter(pageDeps)),
    composeRouter(
      buildApiReferenceRouter(target.environment, target.environment === 'sandbox' ? deps.config.sandbox_base_url : deps.config.base_url),
    ),
    composeRouter(router),
  ]);
}
