import type { Context } from 'koa';
import { invalid, notFound } from '../errors/domain-error.js';
import { depositDetail, depositsPage, type GiftScope } from '../gift-processing/dashboard-service.js';
import type { DashboardDeps } from './deps.js';
import { depositsPath, mailPath, propertyForms, setNotice, shownDeposit, shownDonations } from './gift-shown.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';

/**
 * A nonprofit's Deposits (docs/gift-processing.md, "On the dashboard"): the money its payment
 * sources brought in, newest first, for every member; a deposit's page with its donations and
 * properties.
 */

const PAGE_SIZE = 25;

/** The nonprofit's scope, or 404: deposits are a nonprofit's. */
export function giftScope(deps: DashboardDeps, { organization }: OrgRequest): GiftScope {
  if (organization.kind !== 'nonprofit') throw notFound('Gift processing is for nonprofits; this organization is not one.');
  return { organizationId: organization.id, environment: deps.environment };
}

/** Where a member may set property values (Owners, Admins and Members; not Read-only users): undefined otherwise. */
export function propertyAction(request: OrgRequest, path: string): string | undefined {
  return request.organization.role === 'read_only' ? undefined : path;
}

/** GET /orgs/:ein/deposits */
export async function showDeposits(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const scope = giftScope(deps, request);
  const before = ctx.query.before;
  if (before !== undefined && (typeof before !== 'string' || before === '')) throw invalid('before: not a row of this list');
  const page = await depositsPage(deps.db, scope, before, PAGE_SIZE);
  const { ein } = request.organization;
  const here = depositsPath(ein);
  sendDashboardPage(
    deps,
    ctx,
    request.viewer,
    'dashboard/deposits.njk',
    { organization: request.organization, tab: 'deposits' },
    {
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      deposits: page.rows.map((d) => shownDeposit(ein, d)),
      newer: before ? here : undefined,
      older: page.older ? `${here}?before=${encodeURIComponent(page.older)}` : undefined,
    },
  );
}

/** GET /orgs/:ein/deposits/:deposit */
export async function showDeposit(
  deps: DashboardDeps,
  ctx: Context,
  request: OrgRequest,
  extra: { notice?: string; error?: string; status?: number } = {},
): Promise<void> {
  const scope = giftScope(deps, request);
  const id = String(ctx.params.deposit ?? '');
  const detail = await depositDetail(deps.db, scope, id);
  if (!detail) throw notFound('There is no such deposit among this organization’s.');
  const { ein } = request.organization;
  const here = `${depositsPath(ein)}/${id}`;
  const action = propertyAction(request, `${here}/properties`);
  sendDashboardPage(
    deps,
    ctx,
    request.viewer,
    'dashboard/deposit.njk',
    { organization: request.organization, tab: 'deposits' },
    {
      back: depositsPath(ein),
      deposit: {
        ...shownDeposit(ein, detail.deposit),
        id: detail.deposit.id,
        description: detail.deposit.description,
        mailItemHref: detail.deposit.mailItemId ? `${mailPath(ein)}/${detail.deposit.mailItemId}` : undefined,
      },
      donations: shownDonations(detail.donations, action),
      properties: propertyForms(detail.deposit.id, detail.properties, action),
      notice: extra.notice ?? setNotice(ctx.query.set, [...detail.properties, ...detail.donations.flatMap((d) => d.properties)]),
      error: extra.error,
    },
    extra.status,
  );
}
