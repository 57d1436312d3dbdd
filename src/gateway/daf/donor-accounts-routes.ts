import { FUND_PROVIDERS } from '../auth/require-caller-kind.js';
import { z } from 'zod';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import {
  donorAccountOf,
  donorAccountsPage,
  openDonorAccount,
  setDonorAccountDisabled,
  updateDonorAccountFields,
} from '../../daf/donor-accounts-service.js';
import { metadataSchema, pageParams } from './list-params.js';
import { dafScope } from '../../daf/scope.js';
import { donorAccountView } from '../../daf/views.js';

const DonorAccount = z.object({
  id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  donor: z.object({ email: z.string(), first_name: z.string().nullable(), last_name: z.string().nullable(), phone: z.string().nullable() }),
  external_id: z.string().nullable(),
  approval: z.object({ approved_at: z.string(), approved_by: z.string() }).nullable(),
  rejection: z.object({ rejected_at: z.string(), rejected_by: z.string(), rejection_reason: z.string().optional() }).nullable(),
  disabled: z.boolean(),
  metadata: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
const Id = z.object({ id: z.string().min(1).max(100) });
const text = (max: number) => z.string().trim().max(max);
const base = {
  tag: 'Donor Accounts',
  versions: ['2026-04-01'] as const,
  area: 'daf',
  credentials: 'any' as const,
  callers: FUND_PROVIDERS,
};

export const donorAccountRoutes = [
  defineRoute({
    ...base,
    operationId: 'create-donor-account',
    method: 'post',
    path: '/v1/donor_accounts',
    summary: 'Create a pending donor account (provider-initiated setup)',
    access: 'write',
    body: z
      .object({
        donor: z
          .object({
            email: z.string().trim().email().max(254),
            first_name: text(255).optional(),
            last_name: text(255).optional(),
            phone: text(20).optional(),
          })
          .strict(),
        external_id: text(255).optional(),
        metadata: metadataSchema.optional(),
      })
      .strict(),
    status: 201,
    idempotent: true,
    location: (result) => `/v1/donor_accounts/${(result as { id: string }).id}`,
    response: DonorAccount,
    errors: [400, 401, 403, 409],
    async handler({ db, caller, body }) {
      return donorAccountView(await openDonorAccount(db, dafScope(caller), body as Parameters<typeof openDonorAccount>[2]));
    },
  }),
  defineRoute({
    ...base,
    operationId: 'list-donor-accounts',
    method: 'get',
    path: '/v1/donor_accounts',
    summary: "List the provider's donor accounts",
    access: 'read',
    query: z
      .object({
        ...pageParams,
        giving_pool_id: z.string().max(100).optional(),
        status: z.enum(['pending', 'approved', 'rejected']).optional(),
        email: z.string().max(254).optional(),
        external_id: z.string().max(255).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(DonorAccount), next_page_token: z.string().nullable() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await donorAccountsPage(
        db,
        dafScope(caller),
        { status: query.status, email: query.email, externalId: query.external_id, givingPoolId: query.giving_pool_id },
        decodeCursor(query.page_token, 'page_token'),
        query.page_limit,
      );
      return listPage(rows, query.page_limit, donorAccountView, 'next_page_token|null');
    },
  }),
  defineRoute({
    ...base,
    operationId: 'get-donor-account',
    method: 'get',
    path: '/v1/donor_accounts/:id',
    summary: 'Get a donor account',
    access: 'read',
    params: Id,
    response: DonorAccount,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await donorAccountOf(db, dafScope(caller), params.id);
      if (!row) throw resourceNotFound('The donor account');
      return donorAccountView(row);
    },
  }),
  defineRoute({
    ...base,
    operationId: 'update-donor-account',
    method: 'patch',
    path: '/v1/donor_accounts/:id',
    summary: "Update a donor account's donor fields, external_id or metadata (never its status)",
    access: 'write',
    params: Id,
    body: z
      .object({
        donor: z
          .object({ first_name: text(255).optional(), last_name: text(255).optional(), phone: text(20).optional() })
          .strict()
          .optional(),
        external_id: text(255).optional(),
        metadata: metadataSchema.optional(),
      })
      .strict(),
    response: DonorAccount,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, body }) {
      return donorAccountView(
        await updateDonorAccountFields(db, dafScope(caller), params.id, body as Parameters<typeof updateDonorAccountFields>[3]),
      );
    },
  }),
  defineRoute({
    ...base,
    operationId: 'disable-donor-account',
    method: 'post',
    path: '/v1/donor_accounts/:id/disable',
    summary: 'Disable an approved donor account (idempotent)',
    access: 'write',
    params: Id,
    response: DonorAccount,
    errors: [400, 401, 403, 404, 409],
    async handler({ db, caller, params }) {
      return donorAccountView(await setDonorAccountDisabled(db, dafScope(caller), params.id, true));
    },
  }),
  defineRoute({
    ...base,
    operationId: 'enable-donor-account',
    method: 'post',
    path: '/v1/donor_accounts/:id/enable',
    summary: 'Re-enable a disabled donor account (idempotent)',
    access: 'write',
    params: Id,
    response: DonorAccount,
    errors: [400, 401, 403, 404, 409],
    async handler({ db, caller, params }) {
      return donorAccountView(await setDonorAccountDisabled(db, dafScope(caller), params.id, false));
    },
  }),
];
