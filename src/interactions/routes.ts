import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment, Role, SubjectType } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { findUserByEmail, findUserById, listNonprofitMemberships } from '../accounts/repository.js';
import crypto from 'node:crypto';
import { hashPassword, MIN_PASSWORD_PARAMS, verifyPassword } from '../accounts/passwords.js';
import { normaliseEmail } from '../accounts/service.js';
import { formatEin } from '../accounts/ein.js';
import { readForm } from '../http/form-body.js';
import { insertAuthorization } from '../oidc/authorizations.js';
import { INTERACTION_PREFIX } from '../oidc/provider.js';
import { renderView } from '../views/render.js';
import { planConsent } from './consent-plan.js';
import { csrfToken, verifyCsrf } from './csrf.js';
import { SCOPE_DESCRIPTIONS } from './scope-descriptions.js';

export interface InteractionDeps {
  db: Db;
  environment: Environment;
  /** The dashboard origin of this environment. */
  origin: string;
  provider: () => Provider;
  csrfKey: Buffer;
}

interface Details {
  uid: string;
  prompt: { name: string; reasons: string[] };
  params: Record<string, unknown>;
  session?: { accountId?: string };
}

// A hash of a random password: verifying against it keeps an unknown e-mail address as
// slow as a wrong password, so timing does not tell them apart.
let dummyHash: Promise<string> | undefined;
const getDummyHash = () => (dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'), MIN_PASSWORD_PARAMS));

function pageHeaders(ctx: Context, extraFormTarget?: string): void {
  let formAction = "'self'";
  if (extraFormTarget) {
    try {
      formAction += ` ${new URL(extraFormTarget).origin}`;
    } catch {
      /* not a URL: nothing to allow */
    }
  }
  ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'self'; img-src 'self' https: data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`);
  ctx.type = 'html';
}

export function buildInteractionRouter(deps: InteractionDeps): Router {
  const router = new Router({ prefix: INTERACTION_PREFIX });
  const sandbox = deps.environment === 'sandbox';

  async function details(ctx: Context): Promise<Details> {
    return (await deps.provider().interactionDetails(ctx.req, ctx.res)) as unknown as Details;
  }

  async function finish(ctx: Context, result: Record<string, unknown>): Promise<void> {
    const target = await deps.provider().interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(target);
  }

  function renderLogin(ctx: Context, d: Details, error?: string, email = ''): void {
    pageHeaders(ctx, String(d.params.redirect_uri ?? ''));
    ctx.body = renderView('login.njk', { sandbox, uid: d.uid, csrf: csrfToken(deps.csrfKey, d.uid), error, email, action: `${INTERACTION_PREFIX}/${d.uid}/login` });
  }

  async function renderConsent(ctx: Context, d: Details, chosenOrg?: string): Promise<void> {
    const userId = d.session?.accountId;
    const user = userId ? await findUserById(deps.db, userId) : undefined;
    const client = await deps.provider().Client.find(String(d.params.client_id));
    if (!user || !client) throw new Error('interaction without a user or client');
    const memberships = await listNonprofitMemberships(deps.db, user.id);
    pageHeaders(ctx, String(d.params.redirect_uri ?? ''));
    const csrf = csrfToken(deps.csrfKey, d.uid);
    const clientView = { name: client.clientName, logo: (client as unknown as { logoUri?: string }).logoUri };
    const membership = memberships.find((m) => m.id === chosenOrg) ?? (memberships.length === 1 ? memberships[0] : undefined);
    if (!membership) {
      ctx.body = renderView('choose-organization.njk', {
        sandbox,
        client: clientView,
        user: { email: user.email },
        organizations: memberships.map((m) => ({ id: m.id, name: m.name, ein: formatEin(m.ein) })),
        action: `${INTERACTION_PREFIX}/${d.uid}`,
        denyAction: `${INTERACTION_PREFIX}/${d.uid}/deny`,
        csrf,
      });
      return;
    }
    const subjectType = ((client as unknown as { authorization_subject?: SubjectType }).authorization_subject ?? 'user') as SubjectType;
    const plan = planConsent(String(d.params.scope ?? '').split(' '), String(client.scope ?? '').split(' '), membership.role as Role, subjectType);
    ctx.body = renderView('consent.njk', {
      sandbox,
      client: clientView,
      user: { email: user.email, name: user.display_name },
      organization: { id: membership.id, name: membership.name, ein: formatEin(membership.ein) },
      role: membership.role,
      subjectType,
      plan,
      granted: plan.granted.map((s) => ({ scope: s, text: SCOPE_DESCRIPTIONS[s] })),
      withheld: plan.withheld.map((s) => ({ scope: s, text: SCOPE_DESCRIPTIONS[s] })),
      action: `${INTERACTION_PREFIX}/${d.uid}/consent`,
      denyAction: `${INTERACTION_PREFIX}/${d.uid}/deny`,
      csrf,
    });
  }

  router.get('/:uid', async (ctx) => {
    const d = await details(ctx);
    if (d.prompt.name === 'login') return renderLogin(ctx, d);
    await renderConsent(ctx, d, typeof ctx.query.org === 'string' ? ctx.query.org : undefined);
  });

  router.post('/:uid/login', async (ctx) => {
    const d = await details(ctx);
    const form = await readForm(ctx);
    verifyCsrf(ctx, deps.csrfKey, d.uid, form.csrf, deps.origin);
    let email = '';
    try {
      email = normaliseEmail(form.email ?? '');
    } catch {
      email = '';
    }
    const user = email ? await findUserByEmail(deps.db, email) : undefined;
    const ok = await verifyPassword(user?.password_hash ?? (await getDummyHash()), form.password ?? '');
    const audit = { environment: deps.environment, ip: ctx.state.clientIp ?? null, requestId: ctx.state.requestId ?? null, clientId: String(d.params.client_id ?? '') || null };
    if (!user || !ok || user.disabled_at) {
      await recordAudit(deps.db, { ...audit, event: 'login.failed', actorUserId: user?.id ?? null, details: { email } });
      ctx.status = 401;
      return renderLogin(ctx, d, 'Incorrect e-mail address or password.', form.email ?? '');
    }
    await recordAudit(deps.db, { ...audit, event: 'login.succeeded', actorUserId: user.id });
    await finish(ctx, { login: { accountId: user.id } });
  });

  router.post('/:uid/consent', async (ctx) => {
    const d = await details(ctx);
    const form = await readForm(ctx);
    verifyCsrf(ctx, deps.csrfKey, d.uid, form.csrf, deps.origin);
    const userId = d.session?.accountId;
    if (d.prompt.name !== 'consent' || !userId) return renderLogin(ctx, d);
    const provider = deps.provider();
    const client = await provider.Client.find(String(d.params.client_id));
    const membership = (await listNonprofitMemberships(deps.db, userId)).find((m) => m.id === form.organization);
    if (!client || !membership) return renderConsent(ctx, d);
    const subjectType = ((client as unknown as { authorization_subject?: SubjectType }).authorization_subject ?? 'user') as SubjectType;
    // Decided again on the server from current data: the page is never trusted.
    const plan = planConsent(String(d.params.scope ?? '').split(' '), String(client.scope ?? '').split(' '), membership.role as Role, subjectType);
    if (!plan.canApprove) return renderConsent(ctx, d, membership.id);

    const grant = new provider.Grant({ accountId: userId, clientId: client.clientId });
    grant.addOIDCScope(plan.granted.join(' '));
    if (plan.withheld.length > 0) grant.rejectOIDCScope(plan.withheld.join(' '));
    const grantId = await grant.save();
    await insertAuthorization(deps.db, { grantId, environment: deps.environment, clientId: client.clientId, subjectType, userId, organizationId: membership.id, scopes: plan.granted });
    await recordAudit(deps.db, {
      event: 'consent.granted',
      environment: deps.environment,
      actorUserId: userId,
      organizationId: membership.id,
      clientId: client.clientId,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { grant_id: grantId, scopes: plan.granted, subject_type: subjectType },
    });
    await finish(ctx, { consent: { grantId } });
  });

  router.post('/:uid/deny', async (ctx) => {
    const d = await details(ctx);
    const form = await readForm(ctx);
    verifyCsrf(ctx, deps.csrfKey, d.uid, form.csrf, deps.origin);
    await recordAudit(deps.db, {
      event: 'consent.denied',
      environment: deps.environment,
      actorUserId: d.session?.accountId ?? null,
      clientId: String(d.params.client_id ?? '') || null,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
    });
    await finish(ctx, { error: 'access_denied', error_description: 'The user denied the request.' });
  });

  return router;
}
