import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { AuditEventKind } from './event-kinds.js';
import { countAuditEvent, insertAuditEvent } from './repository.js';

export interface AuditEvent {
  event: AuditEventKind;
  environment?: Environment | null;
  actorUserId?: string | null;
  organizationId?: string | null;
  clientId?: string | null;
  ip?: string | null;
  requestId?: string | null;
  /** Never secrets: ids, names, reasons. */
  details?: Record<string, unknown>;
}

function rowOf(event: AuditEvent) {
  return {
    event: event.event,
    environment: event.environment ?? null,
    actor_user_id: event.actorUserId ?? null,
    organization_id: event.organizationId ?? null,
    client_id: event.clientId ?? null,
    ip: event.ip || null,
    request_id: event.requestId ?? null,
    details: JSON.stringify(event.details ?? {}),
  };
}

/** Appends to the audit trail; pass the caller's transaction so the event commits with the change. */
export async function recordAudit(db: Executor, event: AuditEvent): Promise<void> {
  await insertAuditEvent(db, rowOf(event));
}

/**
 * Counts a repeated event on one row per `aggregateKey` (its `details` gain `count` and
 * `last_at`; the rest is the first event's): for events that come in floods, such as refused
 * sign-ins during a lockout (docs/security.md, "Racing the sign-in lockout with concurrent
 * wrong passwords"). Atomic: concurrent events add to the same row.
 */
export async function countAudit(db: Executor, event: AuditEvent, aggregateKey: string): Promise<void> {
  await countAuditEvent(db, { ...rowOf(event), aggregate_key: aggregateKey });
}
