import type { Context } from 'koa';
import { findUserByEmail } from '../accounts/repository.js';
import { normaliseEmail } from '../accounts/service.js';
import { listAuditEventNames, listAuditEvents, type AuditRow } from '../audit/repository.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';

const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` as the start of that day in UTC; undefined when empty, null when malformed. */
function day(value: unknown): Date | undefined | null {
  if (typeof value !== 'string' || value === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? null : date;
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** The details of an event as short "name: value" pairs (ids, roles, reasons; never secrets). */
function detailsOf(row: AuditRow): { name: string; value: string }[] {
  return Object.entries(row.details ?? {}).map(([name, value]) => ({ name, value: Array.isArray(value) ? value.join(' ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value) }));
}

/**
 * GET /orgs/:ein/audit: the organization's audit trail, newest first, filtered by who acted
 * (their e-mail address), the kind of event and a range of days (UTC), 50 events a page.
 */
export async function showAudit(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const events = await listAuditEventNames(deps.db, organization.id);
  const filters = { actor: text(ctx.query.actor), event: text(ctx.query.event), from: text(ctx.query.from), to: text(ctx.query.to) };
  const errors: string[] = [];
  let actorUserId: string | undefined;
  let unknownActor = false;
  if (filters.actor) {
    try {
      const user = await findUserByEmail(deps.db, normaliseEmail(filters.actor));
      actorUserId = user?.id;
      unknownActor = !user;
    } catch {
      errors.push(`“${filters.actor}” is not an e-mail address.`);
    }
  }
  if (filters.event && !events.includes(filters.event)) errors.push('Choose an event of the list.');
  const since = day(filters.from);
  const until = day(filters.to);
  if (since === null) errors.push('“From” must be a date (YYYY-MM-DD).');
  if (until === null) errors.push('“To” must be a date (YYYY-MM-DD).');
  const before = typeof ctx.query.before === 'string' && /^\d{1,19}$/.test(ctx.query.before) ? ctx.query.before : undefined;
  const page =
    errors.length > 0 || unknownActor
      ? { rows: [], next: null }
      : await listAuditEvents(deps.db, { organizationId: organization.id, actorUserId, event: filters.event || undefined, since: since ?? undefined, until: until ? new Date(until.getTime() + DAY_MS) : undefined, limit: PAGE_SIZE, before });
  const query = (extra: Record<string, string>) => {
    const params = new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, v]) => v !== ''));
    const qs = params.toString();
    return `${orgPath(organization.ein, 'audit')}${qs ? `?${qs}` : ''}`;
  };
  sendDashboardPage(deps, ctx, viewer, 'dashboard/audit.njk', { organization, tab: 'audit' }, {
    filters,
    events,
    rows: page.rows.map((r) => ({ when: shownDate(r.occurred_at), event: r.event, actor: r.actor_email, environment: r.environment, client: r.client_id, ip: r.ip, details: detailsOf(r) })),
    filtered: Object.values(filters).some((v) => v !== ''),
    action: orgPath(organization.ein, 'audit'),
    newer: before ? query({}) : undefined,
    older: page.next ? query({ before: page.next }) : undefined,
    error: errors.length > 0 ? errors.join(' ') : undefined,
  }, errors.length > 0 ? 400 : undefined);
}
