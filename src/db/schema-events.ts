import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the events, webhook and outbound mail tables (migrations 20261122000600, 20261126200100, 20261129180000). */

export type SubscriptionStatus = 'active' | 'disabled' | 'deleted' | 'requires_attention';

export interface EventsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  category: string;
  associated_object_id: string;
  associated_object_type: string;
  created_at: CreatedAt;
  /** The order events were written in: an object's webhooks go out in it (migration 20261129180000). */
  seq: ColumnType<string, never, never>;
}

export interface EventSubscriptionsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  url: string;
  category: string;
  status: Generated<SubscriptionStatus>;
  signing_secret: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  last_success_at: Date | null;
  failing_since: Date | null;
  /** Failed attempts in a row (migration 20261126200100). */
  consecutive_failures: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: string;
  environment: string;
  subscription_id: string;
  event_id: string;
  status: Generated<'pending' | 'succeeded' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: CreatedAt;
}

export interface OutboundMailTable {
  id: ColumnType<string, never, never>;
  recipient: string;
  subject: string;
  body: string;
  created_at: CreatedAt;
}

export interface EventsDatabase {
  events: EventsTable;
  event_subscriptions: EventSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  outbound_mail: OutboundMailTable;
}

export const EVENT_TABLE_COLUMNS = {
  events: columns<EventsTable>()([
    'id',
    'environment',
    'organization_id',
    'category',
    'associated_object_id',
    'associated_object_type',
    'created_at',
    'seq',
  ]),
  event_subscriptions: columns<EventSubscriptionsTable>()([
    'id',
    'environment',
    'organization_id',
    'url',
    'category',
    'status',
    'signing_secret',
    'created_at',
    'updated_at',
    'last_success_at',
    'failing_since',
    'consecutive_failures',
  ]),
  webhook_deliveries: columns<WebhookDeliveriesTable>()([
    'id',
    'environment',
    'subscription_id',
    'event_id',
    'status',
    'attempts',
    'next_attempt_at',
    'locked_until',
    'last_attempt_at',
    'last_status',
    'last_error',
    'created_at',
  ]),
  outbound_mail: columns<OutboundMailTable>()(['id', 'recipient', 'subject', 'body', 'created_at']),
} satisfies { [K in keyof EventsDatabase]: readonly string[] };
