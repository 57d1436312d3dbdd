import { z } from 'zod';
import { onboardSandboxOrganization, organizationById } from '../../directory/organization-service.js';
import { resubmitOnboardedRecipient } from '../../grantmaking/disbursement-retries-service.js';
import { DIRECTORY_SEARCH_LIMIT, searchDirectory } from '../../directory/search-service.js';
import { GRANTMAKERS } from '../auth/require-caller-kind.js';
import { environmentOf } from '../routing/environment.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { Organization, organizationSummaryView, organizationView } from './views.js';

const OrganizationSummary = z.object({
  id: z.string(),
  ein: z.string(),
  name: z.string(),
  city: z.string().optional(),
  state: z.string().optional(),
});

const common = {
  versions: ['2026-04-01', '2026-01-15'] as const,
  area: 'organizations',
  credentials: 'any' as const,
  callers: GRANTMAKERS,
};
// Platforms and nonprofits read the directory too: a Connect names its nonprofit by the
// directory's id (docs/giving.md, "Connects"), which a platform, or a nonprofit creating its own,
// finds here. The rest stays the grantmakers'.
const readers = { ...common, callers: [...GRANTMAKERS, 'platform', 'nonprofit'] as const };
const Id = z.object({ id: z.string().min(1).max(100) });

export const organizationRoutes = [
  // Before /v1/organizations/:id, which would otherwise take "search" for an id.
  defineRoute({
    ...readers,
    tag: 'Organizations',
    operationId: 'searchOrganizations',
    method: 'get',
    path: '/v1/organizations/search',
    summary: 'Search the directory of organizations by EIN or name (typeahead)',
    access: 'read',
    query: z
      .object({
        q: z.string().max(1000).optional(),
        ein: z.string().max(100).optional(),
        name: z.string().max(1000).optional(),
        limit: z.coerce.number().int().min(1).max(DIRECTORY_SEARCH_LIMIT).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(OrganizationSummary) }),
    errors: [400, 401, 403],
    async handler({ db, query }) {
      const found = await searchDirectory(db, query);
      return { results: found.map(organizationSummaryView) };
    },
  }),
  defineRoute({
    ...readers,
    tag: 'Organizations',
    operationId: 'getOrganization',
    method: 'get',
    path: '/v1/organizations/:id',
    summary: 'Get an organization of the directory by its id',
    access: 'read',
    params: Id,
    response: Organization,
    errors: [400, 401, 403, 404],
    async handler({ db, params }) {
      const record = await organizationById(db, params.id);
      if (!record) throw resourceNotFound('The organization');
      return organizationView(record);
    },
  }),
  defineRoute({
    ...common,
    tag: 'Organizations',
    operationId: 'onboardOrganization',
    method: 'post',
    path: '/v1/simulations/organizations/onboard/:id',
    summary: 'Sandbox: onboard an organization onto a settlement rail (fixed by the first call)',
    access: 'write',
    params: Id,
    body: z.object({ settlement: z.enum(['SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER', 'SANDBOX_SETTLEMENT_ACH']) }),
    response: Organization,
    errors: [400, 401, 403, 404],
    async handler({ ctx, db, caller, params, body }) {
      // A simulation: production has no such operation (docs/directory.md, "Sandbox onboarding").
      if (environmentOf(ctx) !== 'sandbox') throw resourceNotFound('POST /v1/simulations/organizations/onboard/{id}');
      const { settlement } = body as { settlement: 'SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER' | 'SANDBOX_SETTLEMENT_ACH' };
      const record = await onboardSandboxOrganization(db, { id: params.id, settlement, grantmakerId: caller.organizationId });
      // Its disbursements held for a check's address now pay on the electronic rail (docs/grantmaking.md, "Returned checks").
      await resubmitOnboardedRecipient(db, 'sandbox', record.organization.id);
      return organizationView(record);
    },
  }),
];
