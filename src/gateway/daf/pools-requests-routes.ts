import { FUND_PROVIDERS } from '../auth/require-caller-kind.js';
import { z } from 'zod';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import {
  givingPoolOf,
  givingPoolsPage,
  grantRequestOf,
  grantRequestsPage,
  rejectGrantRequest,
  submitGrantRequest,
} from '../../daf/grant-requests-service.js';
import { pageParams } from './list-params.js';
import { dafScope } from '../../daf/scope.js';
import { givingPoolView, grantRequestView } from '../../daf/views.js';

const GivingPool = z.object({
  id: z.string(),
  name: z.string(),
  donor_account_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: z.record(z.string(), z.string()),
});
const GrantRequest = z.object({
  id: z.string(),
  donor_account_id: z.string(),
  giving_pool_id: z.string().nullable(),
  status: z.enum(['awaiting_account_decision', 'pending', 'submitted', 'rejected']),
  ein: z.string(),
  nonprofit_name: z.string().optional(),
  amount_cents: z.number().int(),
  frequency: z.enum(['one_time', 'monthly', 'quarterly', 'annual']),
  form_url: z.string(),
  purpose: z.string().nullable(),
  note: z.string().nullable(),
  /** The published GrantRequestDonorContact: a snapshot, present when one was captured. */
  donor_contact: z
    .object({
      name: z.string().optional(),
      email: z.string().optional(),
      phone: z.string().optional(),
      address: z
        .object({
          line1: z.string().optional(),
          line2: z.string().nullable().optional(),
          city: z.string().optional(),
          state: z.string().optional(),
          zip: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  rejection_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const common = { versions: ['2026-04-01'] as const, area: 'daf', credentials: 'any' as const, callers: FUND_PROVIDERS };
const Id = z.object({ id: z.string().min(1).max(100) });

export const givingPoolRoutes = [
  defineRoute({
    ...common,
    tag: 'Giving Pools',
    operationId: 'list-funds',
    method: 'get',
    path: '/v1/giving_pools',
    summary: "List the provider's giving pools",
    access: 'read',
    query: z.object({ ...pageParams, donor_account_id: z.string().max(100).optional() }).strict(),
    response: z.object({ results: z.array(GivingPool), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await givingPoolsPage(
        db,
        dafScope(caller),
        query.donor_account_id,
        decodeCursor(query.page_token, 'page_token'),
        query.page_limit,
      );
      return listPage(rows, query.page_limit, givingPoolView, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    tag: 'Giving Pools',
    operationId: 'get-fund',
    method: 'get',
    path: '/v1/giving_pools/:id',
    summary: 'Get a giving pool',
    access: 'read',
    params: z.object({ id: z.string().uuid({ message: 'must be a UUID' }) }),
    response: GivingPool,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await givingPoolOf(db, dafScope(caller), params.id);
      if (!row) throw resourceNotFound('The giving pool');
      return givingPoolView(row);
    },
  }),
];

export const grantRequestRoutes = [
  defineRoute({
    ...common,
    tag: 'Grant Requests',
    operationId: 'list-grant-requests',
    method: 'get',
    path: '/v1/grant_requests',
    summary: "List the provider's grant requests",
    access: 'read',
    query: z.object({ ...pageParams, donor_account_id: z.string().max(100).optional() }).strict(),
    response: z.object({ results: z.array(GrantRequest), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await grantRequestsPage(
        db,
        dafScope(caller),
        query.donor_account_id,
        decodeCursor(query.page_token, 'page_token'),
        query.page_limit,
      );
      return listPage(rows, query.page_limit, grantRequestView, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    tag: 'Grant Requests',
    operationId: 'get-grant-request',
    method: 'get',
    path: '/v1/grant_requests/:id',
    summary: 'Get a grant request',
    access: 'read',
    params: Id,
    response: GrantRequest,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await grantRequestOf(db, dafScope(caller), params.id);
      if (!row) throw resourceNotFound('The grant request');
      return grantRequestView(row);
    },
  }),
  defineRoute({
    ...common,
    tag: 'Grant Requests',
    operationId: 'submit-grant-request',
    method: 'post',
    path: '/v1/grant_requests/:id/submit',
    summary: 'Confirm the grant was submitted in your system',
    access: 'write',
    params: Id,
    body: z.object({ external_grant_id: z.string().trim().max(255).optional(), comment: z.string().trim().max(400).optional() }).strict(),
    response: GrantRequest,
    errors: [400, 401, 403, 404, 409, 412],
    async handler({ db, caller, params, body }) {
      return grantRequestView(
        await submitGrantRequest(db, dafScope(caller), params.id, body as { external_grant_id?: string; comment?: string }),
      );
    },
  }),
  defineRoute({
    ...common,
    tag: 'Grant Requests',
    operationId: 'reject-grant-request',
    method: 'post',
    path: '/v1/grant_requests/:id/reject',
    summary: 'Decline to process the grant',
    access: 'write',
    params: Id,
    body: z.object({ reason: z.string().trim().max(400).optional() }).strict(),
    response: GrantRequest,
    errors: [400, 401, 403, 404, 409],
    async handler({ db, caller, params, body }) {
      return grantRequestView(await rejectGrantRequest(db, dafScope(caller), params.id, body as { reason?: string }));
    },
  }),
];
