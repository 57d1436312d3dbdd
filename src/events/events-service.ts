import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import { findEvent, listEvents, type EventRow } from './repository.js';
import type { SubscriptionScope } from './subscriptions-service.js';

export type { EventRow };

/** A page of an organization's events of `categories` (an API version's, or the one asked for), newest first. */
export function eventsPage(
  db: Db,
  scope: SubscriptionScope,
  categories: readonly string[],
  cursor: Cursor | undefined,
  limit: number,
): Promise<EventRow[]> {
  return listEvents(db, scope, categories, cursor, limit);
}

/** One of an organization's events, or undefined. */
export function eventOf(db: Db, scope: SubscriptionScope, id: string): Promise<EventRow | undefined> {
  return findEvent(db, scope, id);
}
