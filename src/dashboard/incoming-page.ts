import type { Context } from 'koa';
import { incomingDisbursementsPage } from '../grantmaking/dashboard-service.js';
import { invalid, notFound } from '../errors/domain-error.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { DISBURSEMENT_STATUS_LABELS, dollars, statusTone } from './money.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';

/**
 * A nonprofit's Incoming disbursements (docs/accounts.md, "Grantmaking and incoming
 * disbursements"): what grantmakers approved for the directory organization with the
 * nonprofit's EIN, in the dashboard's environment, for every member; read-only.
 */

const PAGE_SIZE = 25;

/** GET /orgs/:ein/incoming */
export async function showIncoming(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  if (organization.kind !== 'nonprofit') throw notFound('Incoming disbursements are paid to nonprofits; this organization is not one.');
  const before = ctx.query.before;
  if (before !== undefined && (typeof before !== 'string' || before === '')) throw invalid('before: not a disbursement of this list');
  const page = await incomingDisbursementsPage(
    deps.db,
    { ein: organization.ein.replace('-', ''), environment: deps.environment },
    before,
    PAGE_SIZE,
  );
  const here = orgPath(organization.ein, 'incoming');
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/incoming.njk',
    { organization, tab: 'incoming' },
    {
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      listed: page.recipient !== undefined,
      disbursements: page.rows.map((d) => ({
        id: d.id,
        grantmakerName: d.grantmakerName,
        amount: dollars(d.amount),
        status: DISBURSEMENT_STATUS_LABELS[d.status] ?? d.status,
        tone: statusTone(d.status),
        created: shownDate(d.createdAt),
        approved: shownDate(d.approvedAt),
        updated: shownDate(d.updatedAt),
      })),
      newer: before ? here : undefined,
      older: page.older ? `${here}?before=${encodeURIComponent(page.older)}` : undefined,
    },
  );
}
