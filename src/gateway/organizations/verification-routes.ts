import { z } from 'zod';
import {
  createVerificationRequest,
  verificationRequestOf,
  verificationRequestsPage,
  type GrantmakerScope,
  type NewVerificationRequest,
  type VerificationRequestRow,
} from '../../directory/verification-service.js';
import { GRANTMAKERS } from '../auth/require-caller-kind.js';
import type { Caller } from '../routing/caller.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';

const Address = z.object({
  line1: z.string().trim().min(1).max(255),
  line2: z.string().trim().max(255).optional(),
  city: z.string().trim().min(1).max(255),
  state: z.string().regex(/^[A-Z]{2}$/, 'must be a two-letter US state code in capitals'),
  zip_code: z.string().regex(/^\d{5}(-\d{4})?$/, 'must be five digits, optionally -1234'),
});

const VerificationRequest = z.object({
  id: z.string(),
  ein: z.string(),
  organization_name: z.string(),
  organization_id: z.string(),
  status: z.enum(['needs_review', 'verified', 'failed']),
  website: z.string().optional(),
  recommended_mailing_address: Address,
  verified_at: z.string().datetime().optional(),
  failed_at: z.string().datetime().optional(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

/** The published VerificationRequest: absent, never null, where there is nothing to say. */
function verificationRequestView(row: VerificationRequestRow): z.infer<typeof VerificationRequest> {
  return {
    id: row.id,
    ein: row.ein,
    organization_name: row.organization_name,
    organization_id: row.organization_id,
    status: row.status,
    ...(row.website ? { website: row.website } : {}),
    recommended_mailing_address: {
      line1: row.mailing_line1,
      ...(row.mailing_line2 ? { line2: row.mailing_line2 } : {}),
      city: row.mailing_city,
      state: row.mailing_state,
      zip_code: row.mailing_zip_code,
    },
    ...(row.verified_at ? { verified_at: row.verified_at.toISOString() } : {}),
    ...(row.failed_at ? { failed_at: row.failed_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function scopeOf(caller: Caller): GrantmakerScope {
  return { environment: caller.environment, grantmakerId: caller.organizationId };
}

const common = {
  versions: ['2026-04-01', '2026-01-15'] as const,
  area: 'organizations',
  credentials: 'any' as const,
  callers: GRANTMAKERS,
  tag: 'Verification Requests',
};

export const verificationRequestRoutes = [
  defineRoute({
    ...common,
    operationId: 'createVerificationRequest',
    method: 'post',
    path: '/v1/verification_requests',
    summary: 'Ask for an organization the directory does not list to be verified',
    access: 'write',
    body: z.object({
      ein: z.string().max(20),
      organization_name: z.string().trim().min(1).max(255),
      website: z.string().url().max(2000).optional(),
      contact_email: z.string().email().max(255).optional(),
      recommended_mailing_address: Address,
    }),
    status: 201,
    idempotent: true,
    location: (result) => `/v1/verification_requests/${(result as { id: string }).id}`,
    response: VerificationRequest,
    errors: [400, 401, 403, 409, 412],
    async handler({ db, caller, body }) {
      return verificationRequestView(await createVerificationRequest(db, scopeOf(caller), body as NewVerificationRequest));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'listVerificationRequests',
    method: 'get',
    path: '/v1/verification_requests',
    summary: "List the grantmaker's verification requests, newest first",
    access: 'read',
    query: z
      .object({
        ein: z.string().max(20).optional(),
        page_limit: z.coerce.number().int().min(1).max(100).default(100),
        page_token: z.string().max(200).optional(),
      })
      .strict(),
    response: z.object({ results: z.array(VerificationRequest), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await verificationRequestsPage(
        db,
        scopeOf(caller),
        query.ein,
        decodeCursor(query.page_token, 'page_token'),
        query.page_limit,
      );
      return listPage(rows, query.page_limit, verificationRequestView, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getVerificationRequest',
    method: 'get',
    path: '/v1/verification_requests/:id',
    summary: 'Get a verification request',
    access: 'read',
    // The published operation has no 400: an id no request could have is simply not found.
    params: z.object({ id: z.string() }),
    response: VerificationRequest,
    errors: [401, 403, 404],
    async handler({ db, caller, params }) {
      const row = params.id.length <= 100 ? await verificationRequestOf(db, scopeOf(caller), params.id) : undefined;
      if (!row) throw resourceNotFound('The verification request');
      return verificationRequestView(row);
    },
  }),
];
