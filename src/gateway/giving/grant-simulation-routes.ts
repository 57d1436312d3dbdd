import { z } from 'zod';
import { settleGrant, type GrantOutcome } from '../../giving/grant-lifecycle-service.js';
import { sandboxOnly } from '../grantmaking/callers.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIVING_CALLERS } from './callers.js';
import { Grant, grantView } from './grant-view.js';

/** The sandbox's stand-ins for the DAF completing or canceling a grant (docs/giving.md, "A grant's life"). */

/** The published operation of each outcome, written out so a search for its operationId finds it. */
function simulation({ outcome, operationId, summary }: { outcome: GrantOutcome; operationId: string; summary: string }) {
  return defineRoute({
    operationId,
    method: 'post',
    path: `/v1/simulations/grants/:id/${outcome}`,
    summary,
    tag: 'Grants',
    // 2026-01-15 has no grant simulations.
    versions: ['2026-04-01'],
    area: 'grants',
    access: 'write',
    credentials: 'any',
    callers: GIVING_CALLERS,
    params: z.object({ id: z.string().uuid({ message: 'must be a UUID' }) }),
    response: Grant,
    errors: [400, 401, 403, 404],
    async handler(input) {
      sandboxOnly(input);
      const { db, caller, params, version } = input;
      const grant = await settleGrant(db, { environment: caller.environment, organizationId: caller.organizationId }, params.id, outcome);
      return grantView(db, grant, version);
    },
  });
}

export const grantSimulationRoutes = [
  simulation({
    outcome: 'complete',
    operationId: 'simulateGrantCompletion',
    summary: "Sandbox: the DAF completes one of the caller's grants (the money moves)",
  }),
  simulation({
    outcome: 'cancel',
    operationId: 'simulateGrantCancellation',
    summary: "Sandbox: the DAF cancels one of the caller's grants",
  }),
];
