import type { OrganizationKind } from '../db/schema.js';

/** The kinds of event, for the event-subscriptions API (gateway/events/routes.ts) and the dashboard's webhooks page alike. */

/** The published EventCategory enum (this product emits the six DAF kinds). */
export const EVENT_CATEGORIES = [
  'grant.created',
  'grant.updated',
  'unintegrated_grant.created',
  'unintegrated_grant.updated',
  'donor_account.created',
  'donor_account.updated',
  'authorization_token.created',
  'authorization_token.updated',
  'grant_request.created',
  'grant_request.updated',
  'disbursement.created',
  'disbursement.updated',
  'inbound_transfer.created',
  'inbound_transfer.updated',
  'donation.created',
  'donation.updated',
  'deposit.created',
  'deposit.updated',
  'verification_request.created',
  'verification_request.updated',
] as const;

/**
 * The donor-account kinds came with the DAF APIs (May 2026): 2026-01-15's EventCategory has none of
 * them. They are the kinds this product emits.
 */
export const DAF_KINDS: readonly string[] = [
  'donor_account.created',
  'donor_account.updated',
  'authorization_token.created',
  'authorization_token.updated',
  'grant_request.created',
  'grant_request.updated',
];

/** The grantmaking kinds (disbursements, inbound transfers, verification requests): what a grantmaker's changes write. */
export const GRANTMAKING_KINDS: readonly string[] = [
  'disbursement.created',
  'disbursement.updated',
  'inbound_transfer.created',
  'inbound_transfer.updated',
  'verification_request.created',
  'verification_request.updated',
];

/** DAFpay giving's kinds: what a capture and a grant's life write, for the connect's owner (docs/giving.md). */
export const GIVING_KINDS: readonly string[] = [
  'grant.created',
  'grant.updated',
  'unintegrated_grant.created',
  'unintegrated_grant.updated',
];

/** Gift processing's kinds (docs/gift-processing.md): what a mail batch's ingestion and a property's assignment write, for the nonprofit. */
export const GIFT_KINDS: readonly string[] = ['donation.created', 'donation.updated', 'deposit.created', 'deposit.updated'];

/**
 * The categories an organization of each kind lists and subscribes to: those its own changes
 * write (docs/api.md, "Events and webhooks"). Fund providers keep every published category, as
 * before grantmakers had events; a kind without events has none, so it subscribes to nothing
 * (docs/security.md, "Webhook subscriptions by tenants that have no events").
 */
export const CATEGORIES_BY_KIND: Readonly<Record<OrganizationKind, readonly string[]>> = {
  fund_provider: EVENT_CATEGORIES,
  grantmaker: GRANTMAKING_KINDS,
  nonprofit: [...GIVING_KINDS, ...GIFT_KINDS],
  platform: GIVING_KINDS,
  lockbox_provider: [],
};

/** The kinds that have events, and so may have subscriptions. */
export const SUBSCRIBING_KINDS: readonly OrganizationKind[] = (Object.keys(CATEGORIES_BY_KIND) as OrganizationKind[]).filter(
  (kind) => CATEGORIES_BY_KIND[kind].length > 0,
);

/**
 * The categories the dashboard's webhooks page offers a kind: a fund provider's DAF kinds, a
 * nonprofit's or platform's giving kinds; none for the others (they have no webhooks page).
 */
export function webhookPageCategories(kind: OrganizationKind): readonly string[] {
  if (kind === 'fund_provider') return DAF_KINDS;
  if (kind === 'nonprofit') return [...GIVING_KINDS, ...GIFT_KINDS];
  if (kind === 'platform') return GIVING_KINDS;
  return [];
}
