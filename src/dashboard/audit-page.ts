import type { Context } from 'koa';
import { isAuditEventKind } from '../audit/event-kinds.js';
import { auditEventsPage, auditNames, recordedAuditEvents, userIdByEmail, type AuditRow } from './audit-service.js';
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

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Person = { email: string; display_name: string | null };

const shown = (value: unknown) =>
  Array.isArray(value) ? value.join(' ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);

/** The user an event's details name (`user_id`), when it is a well-formed id. */
function userIdOf(row: AuditRow): string | undefined {
  const id = (row.details as Record<string, unknown> | null)?.user_id;
  return typeof id === 'string' && USER_ID.test(id) ? id : undefined;
}

/**
 * The person an event names, as much as the organization may see: a member now, by address and
 * name; someone no longer in it, only by the address the event itself recorded.
 */
function personOf(member: Person | undefined, recorded: unknown): string {
  if (member) return member.display_name ? `${member.email} · ${member.display_name}` : member.email;
  return typeof recorded === 'string' ? `${recorded} (not a member now)` : 'a former member';
}

/**
 * The details of an event as short "name: value" pairs (ids, roles, reasons; never secrets),
 * the user it names as a person (the address it recorded then folded in); other ids, such as
 * `grant_id`, as they are.
 */
function detailsOf(row: AuditRow, members: ReadonlyMap<string, Person>): { name: string; value: string }[] {
  const { acted_by: _actedBy, ...details } = (row.details ?? {}) as Record<string, unknown>;
  const userId = userIdOf(row);
  if (!userId) return Object.entries(details).map(([name, value]) => ({ name, value: shown(value) }));
  const member = members.get(userId);
  return Object.entries(details).flatMap(([name, value]) => {
    if (name === 'user_id') return [{ name: 'user', value: personOf(member, details.email) }];
    if (name === 'email' && (!member || member.email === value)) return [];
    return [{ name, value: shown(value) }];
  });
}

/** An event the application (the row's client) made itself, with no person signed in: the FDX Consent API's revocation. */
const actedByApplication = (row: AuditRow) =>
  row.actor_email === null && row.client_id !== null && (row.details as Record<string, unknown> | null)?.acted_by === 'application';

/** What the page shows for ids: application names of the registry, people who are members now. */
async function namesFor(deps: DashboardDeps, organizationId: string, rows: readonly AuditRow[]) {
  const clients = rows.flatMap((r) => (r.client_id && r.environment ? [{ environment: r.environment, clientId: r.client_id }] : []));
  const userIds = [...new Set(rows.flatMap((r) => userIdOf(r) ?? []))];
  const { applications, members } = await auditNames(deps.db, organizationId, clients, userIds);
  return {
    application: (r: AuditRow) => (r.client_id && r.environment ? applications.get(`${r.environment} ${r.client_id}`) : undefined),
    members,
  };
}

/**
 * GET /orgs/:ein/audit: the organization's audit trail, newest first, filtered by who acted
 * (their e-mail address), the kind of event and a range of days (UTC), 50 events a page.
 */
export async function showAudit(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const recorded = await recordedAuditEvents(deps.db, organization.id);
  const filters = { actor: text(ctx.query.actor), event: text(ctx.query.event), from: text(ctx.query.from), to: text(ctx.query.to) };
  const errors: string[] = [];
  let actorUserId: string | undefined;
  let unknownActor = false;
  if (filters.actor) {
    try {
      actorUserId = await userIdByEmail(deps.db, filters.actor);
      unknownActor = !actorUserId;
    } catch {
      errors.push(`“${filters.actor}” is not an e-mail address.`);
    }
  }
  // Any kind the product records is a filter, rows or not (a bookmarked filter keeps working);
  // the list offers the kinds this organization has, and the one chosen.
  const knownEvent = filters.event !== '' && isAuditEventKind(filters.event);
  if (filters.event && !knownEvent) errors.push('Choose an event of the list.');
  const events = knownEvent && !recorded.includes(filters.event) ? [...recorded, filters.event].sort() : recorded;
  const since = day(filters.from);
  const until = day(filters.to);
  if (since === null) errors.push('“From” must be a date (YYYY-MM-DD).');
  if (until === null) errors.push('“To” must be a date (YYYY-MM-DD).');
  const before = typeof ctx.query.before === 'string' && /^\d{1,19}$/.test(ctx.query.before) ? ctx.query.before : undefined;
  const page =
    errors.length > 0 || unknownActor
      ? { rows: [], next: null }
      : await auditEventsPage(deps.db, {
          organizationId: organization.id,
          actorUserId,
          event: filters.event || undefined,
          since: since ?? undefined,
          until: until ? new Date(until.getTime() + DAY_MS) : undefined,
          limit: PAGE_SIZE,
          before,
        });
  const query = (extra: Record<string, string>) => {
    const params = new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, v]) => v !== ''));
    const qs = params.toString();
    return `${orgPath(organization.ein, 'audit')}${qs ? `?${qs}` : ''}`;
  };
  const names = await namesFor(deps, organization.id, page.rows);
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/audit.njk',
    { organization, tab: 'audit' },
    {
      filters,
      events,
      rows: page.rows.map((r) => ({
        when: shownDate(r.occurred_at),
        event: r.event,
        actor: r.actor_email,
        actingApplication: actedByApplication(r) ? (names.application(r) ?? r.client_id ?? undefined) : undefined,
        environment: r.environment,
        application: names.application(r),
        client: r.client_id,
        ip: r.ip,
        details: detailsOf(r, names.members),
      })),
      filtered: Object.values(filters).some((v) => v !== ''),
      action: orgPath(organization.ein, 'audit'),
      newer: before ? query({}) : undefined,
      older: page.next ? query({ before: page.next }) : undefined,
      error: errors.length > 0 ? errors.join(' ') : undefined,
    },
    errors.length > 0 ? 400 : undefined,
  );
}
