import type { Context } from 'koa';
import { organizationSecuritySettings, setRequireMfa } from '../accounts/organization-settings.js';
import { DomainError, forbidden, notFound } from '../errors/domain-error.js';
import type { Membership } from '../identity/memberships.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath, SECURITY_PATH } from './paths.js';
import type { Viewer } from './viewer.js';

async function render(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  organization: Membership,
  error?: { text: string; status: number },
): Promise<void> {
  const settings = await organizationSecuritySettings(deps.db, organization.id);
  if (!settings) throw notFound('There is no such organization among yours.');
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/settings.njk',
    { organization, tab: 'settings' },
    {
      requireMfa: settings.requireMfa,
      withoutSecondFactor: settings.withoutSecondFactor,
      canChange: organization.role === 'owner',
      youHaveSecondFactor: viewer.secondFactor,
      securityHref: SECURITY_PATH,
      action: orgPath(organization.ein, 'settings'),
      notice:
        ctx.query.saved === '1'
          ? settings.requireMfa
            ? 'Every member now needs a second factor.'
            : 'A second factor is no longer required of every member.'
          : undefined,
      error: error?.text,
    },
    error?.status,
  );
}

/** GET /orgs/:ein/settings: the organization's security settings. */
export async function showSettings(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  await render(deps, ctx, viewer, organization);
}

/** POST /orgs/:ein/settings: an Owner requires (or stops requiring) a second factor of every member. */
export async function submitSettings(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  try {
    await setRequireMfa(deps.db, {
      organizationId: organization.id,
      requireMfa: form.require_mfa === 'on',
      actor: { userId: viewer.user.id, role: organization.role },
      actorHasSecondFactor: viewer.secondFactor,
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'forbidden')
      throw forbidden(
        `Your role in ${organization.name} is ${organization.role === 'admin' ? 'Admin' : organization.role}; ask an Owner.`,
        { title: 'Only Owners change this setting' },
      );
    if (error instanceof DomainError && error.code === 'precondition')
      return render(deps, ctx, viewer, organization, { text: error.sentence, status: 412 });
    throw error;
  }
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'settings')}?saved=1`);
}
