import { z } from 'zod';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import type { ApiVersion } from '../routing/versions.js';
import { PostalAddress, PropertyAssignment } from '../gift-processing/gift-shapes.js';
import { donationOf, donationsPage, type DonationRow } from './service.js';

/** The published Address has the PostalAddress's members. */
const Address = PostalAddress;
const Donor = z.object({
  full_name: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  address: Address.optional(),
});

const StringMap = z.record(z.string(), z.string());
const Initiation = z.object({
  initiated_at: z.string().datetime(),
  channel: z.enum(['INTEGRATED', 'UNINTEGRATED']).optional(),
  web_location_url: z.string().optional(),
  fundraising_platform_name: z.string().optional(),
  dafpay_form: z.string().optional(),
  dafpay_tracking_id: z.string().optional(),
  dafpay_metadata: StringMap.optional(),
  frequency: z.enum(['ONE_TIME', 'MONTHLY']),
});
const Settlement = z.object({ deposit_id: z.string(), received_at: z.string().datetime(), settled_at: z.string().datetime().optional() });
const DafGrant = z.object({
  organization_name: z.string(),
  donor_fund_name: z.string().optional(),
  program_name: z.string().optional(),
  sponsor_grant_id: z.string().optional(),
});
const Platform = z.object({
  name: z.string().optional(),
  platform_grant_id: z.string().optional(),
  metadata: StringMap.optional(),
  acceptance: z.object({ accepted: z.boolean().optional(), expires_at: z.string().datetime().optional() }).optional(),
});
const CorporateMatch = z.object({
  match_amount: z.number().int().optional(),
  company_name: z.string().optional(),
  program_name: z.string().optional(),
  source: z.string().optional(),
});

const donationFields = {
  id: z.string().describe('The unique identifier for the donation'),
  payment_source_id: z.string(),
  amount_gross: z.number().int().describe('Minor units (cents)'),
  amount_net: z.number().int(),
  amount_fee: z.number().int(),
  currency: z.string(),
  purpose: z.string(),
  note: z.string(),
  individual_gift_amount: z.number().int().optional(),
  attribution: z.object({ primary_donor: Donor.optional(), joint_donor: Donor.optional() }).optional(),
  initiation: Initiation.optional(),
  settlement: Settlement.optional(),
  donor_advised_fund_grant: DafGrant.optional(),
  platform: Platform.optional(),
  corporate_match: CorporateMatch.optional(),
  properties: z.array(PropertyAssignment),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
  canceled_at: z.string().datetime().nullable(),
  payment_status: z.enum([
    'INCOMING_TO_CHARIOT',
    'INCOMING_OUTSIDE_CHARIOT',
    'RECEIVED_IN_CHARIOT',
    'RECEIVED_OUTSIDE_CHARIOT',
    'CANCELED',
  ]),
};
/** 2026-04-01 added external_id; both documents have the gift-processing parts (docs/gift-processing.md, "The API"). */
const DonationV2026_04 = z.object({ ...donationFields, external_id: z.string() });
const DonationV2026_01 = z.object(donationFields);

/**
 * One donation in its API shape. Absent members are undefined, which JSON leaves out: a
 * fixed shape is built much faster than one with conditional spreads, 100 times a page.
 */
function toDonation(row: DonationRow, version: ApiVersion) {
  return {
    id: row.id,
    external_id: version === '2026-04-01' ? row.external_id : undefined,
    payment_source_id: row.payment_source_id,
    amount_gross: Number(row.amount_gross),
    amount_net: Number(row.amount_net),
    amount_fee: Number(row.amount_fee),
    currency: row.currency,
    purpose: row.purpose,
    note: row.note,
    individual_gift_amount: row.individual_gift_amount === null ? undefined : Number(row.individual_gift_amount),
    attribution:
      row.primary_donor || row.joint_donor
        ? { primary_donor: row.primary_donor ?? undefined, joint_donor: row.joint_donor ?? undefined }
        : undefined,
    initiation: row.initiation ?? undefined,
    // Settled by Almoner: the deposit holding its money (the published settlement needs both).
    settlement:
      row.deposit_id !== null && row.settlement_received_at !== null
        ? {
            deposit_id: row.deposit_id,
            received_at: row.settlement_received_at.toISOString(),
            settled_at: row.settlement_settled_at?.toISOString(),
          }
        : undefined,
    donor_advised_fund_grant: row.donor_advised_fund_grant ?? undefined,
    platform: row.platform ?? undefined,
    corporate_match: row.corporate_match ?? undefined,
    properties: row.properties,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    canceled_at: row.canceled_at === null ? null : row.canceled_at.toISOString(),
    payment_status: row.payment_status,
  };
}

const dateTime = z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' });
const listQueryBase = {
  limit: z.coerce.number().int().min(1).max(100).default(100),
  page_token: z.string().max(200).optional(),
  payment_source_id: z.string().max(2000).optional(),
  deposit_id: z.string().max(200).optional(),
  'created_at.after': dateTime.optional(),
  'created_at.before': dateTime.optional(),
};
// dafpay_tracking_id is a 2026-04-01 filter; earlier versions refuse it as unknown.
const ListQuery = z.object({ ...listQueryBase, dafpay_tracking_id: z.string().max(200).optional() }).strict();
const ListQueryV2026_01 = z.object(listQueryBase).strict();

export const donationRoutes = [
  defineRoute({
    operationId: 'listDonations',
    method: 'get',
    path: '/v1/donations',
    summary: "List the authorizing nonprofit's donations, newest first",
    tag: 'donations',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'donations',
    access: 'read',
    credentials: 'any',
    query: ListQuery,
    queryByVersion: { '2026-01-15': ListQueryV2026_01 },
    response: {
      '2026-04-01': z.object({ results: z.array(DonationV2026_04), next_page_token: z.string().optional() }),
      '2026-01-15': z.object({ results: z.array(DonationV2026_01), next_page_token: z.string().optional() }),
    },
    errors: [400, 401, 403],
    async handler({ db, caller, version, query }) {
      const rows = await donationsPage(
        db,
        caller,
        {
          paymentSourceIds: query.payment_source_id
            ?.split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          depositId: query.deposit_id,
          dafpayTrackingId: query.dafpay_tracking_id,
          createdAfter: query['created_at.after'] ? new Date(query['created_at.after']) : undefined,
          createdBefore: query['created_at.before'] ? new Date(query['created_at.before']) : undefined,
        },
        decodeCursor(query.page_token, 'page_token'),
        query.limit,
      );
      return listPage(rows, query.limit, (row) => toDonation(row, version), 'next_page_token');
    },
  }),
  defineRoute({
    operationId: 'getDonation',
    method: 'get',
    path: '/v1/donations/:id',
    summary: "Get one of the authorizing nonprofit's donations",
    tag: 'donations',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'donations',
    access: 'read',
    credentials: 'any',
    params: z.object({ id: z.string().min(1).max(100) }),
    response: { '2026-04-01': DonationV2026_04, '2026-01-15': DonationV2026_01 },
    errors: [400, 401, 403, 404],
    async handler({ db, caller, version, params }) {
      const row = await donationOf(db, caller, params.id);
      // Another nonprofit's or environment's donation does not exist for this caller.
      if (!row) throw resourceNotFound('The donation');
      return toDonation(row, version);
    },
  }),
];
