import type { Context } from 'koa';
import { organizationSecuritySettings, setRequireMfa, setRequireSecondApprover } from '../accounts/organization-settings.js';
import { DomainError, forbidden, notFound } from '../errors/domain-error.js';
import type { Membership } from '../identity/memberships.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath, SECURITY_PATH } from './paths.js';
import type { Viewer } from './viewer.js';

/** The form of "Disbursements need a second person to approve": /orgs/<EIN>/settings/disbursement-approvals. */
export const SECOND_APPROVER_PAGE = 'settings/disbursement-approvals';

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
      secondApprover:
        organization.kind === 'grantmaker'
          ? { required: settings.requireSecondApprover, action: orgPath(organization.ein, SECOND_APPROVER_PAGE) }
          : undefined,
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
          : ctx.query.saved === 'approvals'
            ? settings.requireSecondApprover
              ? 'Disbursements now need a second person to approve.'
              : 'Whoever creates a disbursement may now approve it.'
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

/** POST /orgs/:ein/settings/disbursement-approvals: an Owner of a grantmaker turns "a second person approves" on or off. */
export async function submitSecondApprover(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  if (organization.kind !== 'grantmaker') throw notFound('Disbursements are approved by grantmakers; this organization is not one.');
  try {
    await setRequireSecondApprover(deps.db, {
      organizationId: organization.id,
      required: form.second_approver === 'on',
      actor: { userId: viewer.user.id, role: organization.role },
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'forbidden')
      throw forbidden(
        `Your role in ${organization.name} is ${organization.role === 'admin' ? 'Admin' : organization.role}; ask an Owner.`,
        { title: 'Only Owners change this setting' },
      );
    throw error;
  }
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'settings')}?saved=approvals`);
}
