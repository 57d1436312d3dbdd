import type { AuditFilters } from '../../audit/repository.js';
import { optionalString, UsageError, type Command } from './command.js';

const MAX_LIMIT = 1000;

function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()))
    throw new UsageError(`--${name} must be an ISO 8601 date or instant, e.g. 2026-11-01 or 2026-11-01T12:00:00Z`);
  return date;
}

export const auditList: Command = {
  path: ['audit', 'list'],
  summary: 'audit events, newest first, filtered by organization, actor, event, time',
  usage: 'audit list [--org <ein>] [--actor <email>] [--event <name>] [--since <ISO>] [--until <ISO>] [--limit <n>]',
  options: {
    org: { type: 'string' },
    actor: { type: 'string' },
    event: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(ctx) {
    const { listAuditEvents } = await import('../../audit/repository.js');
    const { requireOrganization, requireUser } = await import('../../accounts/service.js');
    const limitText = optionalString(ctx.values, 'limit') ?? '50';
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT)
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`);
    const since = instant('since', optionalString(ctx.values, 'since'));
    const until = instant('until', optionalString(ctx.values, 'until'));
    const db = await ctx.db();
    const org = optionalString(ctx.values, 'org');
    const actor = optionalString(ctx.values, 'actor');
    const filters: AuditFilters = {
      organizationId: org ? (await requireOrganization(db, org)).id : undefined,
      actorUserId: actor ? (await requireUser(db, actor)).id : undefined,
      event: optionalString(ctx.values, 'event'),
      since,
      until,
      limit: Number(limitText),
    };
    const { rows } = await listAuditEvents(db, filters);
    const events = rows.map((r) => ({
      id: r.id,
      occurred_at: r.occurred_at.toISOString(),
      event: r.event,
      environment: r.environment,
      actor_user_id: r.actor_user_id,
      actor_email: r.actor_email,
      organization_id: r.organization_id,
      client_id: r.client_id,
      ip: r.ip,
      request_id: r.request_id,
      details: r.details,
    }));
    const text = events
      .map(
        (e) =>
          `${e.occurred_at}  ${e.event}  ${e.actor_email ?? '-'}${e.environment ? `  ${e.environment}` : ''}  ${JSON.stringify(e.details)}`,
      )
      .join('\n');
    return { json: { events }, text: text || '(no audit events)' };
  },
};
