import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { insertAuditEvent } from './repository.js';

export interface AuditEvent {
  event: string;
  environment?: Environment | null;
  actorUserId?: string | null;
  organizationId?: string | null;
  clientId?: string | null;
  ip?: string | null;
  requestId?: string | null;
  /** Never secrets: ids, names, reasons. */
  details?: Record<string, unknown>;
}

/** Appends to the audit trail; pass the caller's transaction so the event commits with the change. */
export async function recordAudit(db: Executor, event: AuditEvent): Promise<void> {
  await insertAuditEvent(db, {
    event: event.event,
    environment: event.environment ?? null,
    actor_user_id: event.actorUserId ?? null,
    organization_id: event.organizationId ?? null,
    client_id: event.clientId ?? null,
    ip: event.ip || null,
    request_id: event.requestId ?? null,
    details: JSON.stringify(event.details ?? {}),
  });
}
