import type { Middleware } from 'koa';
import type { Db } from '../../db/database.js';
import { allowListSet, callerInside } from '../../http/client-address.js';
import { recordAudit } from '../../audit/audit-log.js';
import { outsideAllowList } from '../routing/problems.js';
import { environmentOf } from '../routing/environment.js';

/**
 * IP-restricted APIs: the caller address (trusted proxies only, see http/client-address)
 * must be inside the CIDR ranges registered for the token's client. This runs before the
 * token is judged, so a valid token from outside (or from an unknown address) gets the 403,
 * not a 401 or a 200. A client with no ranges registered cannot call a restricted API at
 * all. Denials are audited.
 */
export function ipAllowList(db: Db, area: string): Middleware {
  return async (ctx, next) => {
    const credential = ctx.state.credential;
    if ((credential?.kind === 'access_token' || credential?.kind === 'client_credentials') && credential.row?.client_id) {
      const ranges = credential.row.ip_allow_list ?? [];
      const ip = ctx.state.clientIp ?? '';
      if (ranges.length === 0 || !callerInside(allowListSet(ranges), ctx.state)) {
        await recordAudit(db, {
          event: 'gateway.ip_denied',
          environment: environmentOf(ctx),
          clientId: credential.row.client_id,
          organizationId: credential.kind === 'access_token' ? credential.row.organization_id : null,
          ip: ip || null,
          requestId: ctx.state.requestId ?? null,
          details: { area, path: ctx.path },
        });
        throw outsideAllowList();
      }
    }
    await next();
  };
}
