import { columns, type CreatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the gateway's idempotency keys (migration 20261129130000; docs/api.md, "Idempotency"). */

export interface IdempotencyKeysTable {
  environment: Environment;
  /** The organization the credential acts for: its API keys and access tokens share one key space. */
  organization_id: string;
  /** 1–255 visible ASCII characters, as the caller sent it. */
  key: string;
  /** Method and route path: "POST /v1/donor_accounts". */
  operation: string;
  /** SHA-256 (hex) of the canonical request: path parameters, query and JSON body. */
  fingerprint: string;
  /** The stored answer; null while the first request runs (never committed so). */
  status: number | null;
  /** The answer's JSON body, sealed under the secrets key (it may hold a secret shown once). */
  body_sealed: string | null;
  location: string | null;
  created_at: CreatedAt;
}

export interface IdempotencyDatabase {
  idempotency_keys: IdempotencyKeysTable;
}

export const IDEMPOTENCY_TABLE_COLUMNS = {
  idempotency_keys: columns<IdempotencyKeysTable>()([
    'environment',
    'organization_id',
    'key',
    'operation',
    'fingerprint',
    'status',
    'body_sealed',
    'location',
    'created_at',
  ]),
} satisfies { [K in keyof IdempotencyDatabase]: readonly string[] };
