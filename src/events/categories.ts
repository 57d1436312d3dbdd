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
