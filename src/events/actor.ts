import type { AuditEvent } from '../audit/audit-log.js';
import type { SubjectType } from '../db/schema.js';

/**
 * Who changes an organization's webhooks, for the audit row each change writes in its own
 * transaction (docs/accounts.md, "Organization pages"): a signed-in Owner or Admin on the
 * webhooks page, an API caller (a key, or an application's access token), or the maker's CLI.
 */
export type SubscriptionActor =
  | { kind: 'user'; userId: string; ip: string | null; requestId: string | null }
  | { kind: 'api'; caller: ApiCaller; ip: string | null; requestId: string | null }
  | { kind: 'admin_cli' };

/**
 * What the audit row names of an API caller: the gateway's Caller has these members and more,
 * and this folder, below the gateway, names only what it reads.
 */
export type ApiCaller =
  { kind: 'api_key'; keyId: string } | { kind: 'access_token'; clientId: string; subjectType: SubjectType; userId: string };

/** What a request knows of where it came from (ctx.state). */
interface RequestState {
  clientIp?: string;
  requestId?: string;
}

/** The signed-in user of the dashboard's webhooks page. */
export function userActor(userId: string, request: RequestState): SubscriptionActor {
  return { kind: 'user', userId, ip: request.clientIp || null, requestId: request.requestId ?? null };
}

/** The caller of /v1/event_subscriptions. */
export function apiActor(caller: ApiCaller, request: RequestState): SubscriptionActor {
  return { kind: 'api', caller, ip: request.clientIp || null, requestId: request.requestId ?? null };
}

export const CLI_ACTOR: SubscriptionActor = { kind: 'admin_cli' };

/**
 * The audit row's actor columns and `details.via`: the user (dashboard); the API key's id, or
 * the application (client_id) and, when it acts as a user, that user (API); nobody named (CLI).
 */
export function auditActor(
  actor: SubscriptionActor,
): Pick<AuditEvent, 'actorUserId' | 'clientId' | 'ip' | 'requestId'> & { via: Record<string, string> } {
  switch (actor.kind) {
    case 'user':
      return { actorUserId: actor.userId, ip: actor.ip, requestId: actor.requestId, via: { via: 'dashboard' } };
    case 'api': {
      const { caller } = actor;
      const common = { ip: actor.ip, requestId: actor.requestId };
      if (caller.kind === 'api_key') return { ...common, via: { via: 'api', api_key: caller.keyId } };
      return {
        ...common,
        clientId: caller.clientId,
        actorUserId: caller.subjectType === 'user' ? caller.userId : null,
        via: { via: 'api' },
      };
    }
    case 'admin_cli':
      return { via: { via: 'admin_cli' } };
  }
}
