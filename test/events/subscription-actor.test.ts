import { describe, expect, it } from 'vitest';
import { apiActor, auditActor, CLI_ACTOR, userActor } from '../../src/events/actor.js';
import type { Caller } from '../../src/gateway/routing/caller.js';

/** Who the audit row of a webhook change names, for each kind of actor (docs/accounts.md, "Organization pages"). */
describe('the actor of a webhook change', () => {
  const request = { clientIp: '192.0.2.7', requestId: 'req-1' };
  const token = (subjectType: 'user' | 'organization'): Caller => ({
    kind: 'access_token',
    environment: 'sandbox',
    organizationId: 'org',
    organizationKind: 'fund_provider',
    clientId: 'app-1',
    grantId: 'grant-1',
    subjectType,
    userId: 'approver',
    scopes: new Set(['read_write']),
  });

  it('names the dashboard user, the API key, the application (and the user it acts as), or nobody for the CLI', () => {
    expect(auditActor(userActor('user-1', request))).toEqual({
      actorUserId: 'user-1',
      ip: '192.0.2.7',
      requestId: 'req-1',
      via: { via: 'dashboard' },
    });
    const key: Caller = {
      kind: 'api_key',
      environment: 'sandbox',
      organizationId: 'org',
      organizationKind: 'fund_provider',
      keyId: 'key_1',
    };
    expect(auditActor(apiActor(key, request))).toEqual({ ip: '192.0.2.7', requestId: 'req-1', via: { via: 'api', api_key: 'key_1' } });
    expect(auditActor(apiActor(token('user'), request))).toEqual({
      clientId: 'app-1',
      actorUserId: 'approver',
      ip: '192.0.2.7',
      requestId: 'req-1',
      via: { via: 'api' },
    });
    // An application acting for the organization acts as nobody in particular.
    expect(auditActor(apiActor(token('organization'), {}))).toEqual({
      clientId: 'app-1',
      actorUserId: null,
      ip: null,
      requestId: null,
      via: { via: 'api' },
    });
    expect(auditActor(CLI_ACTOR)).toEqual({ via: { via: 'admin_cli' } });
  });
});
