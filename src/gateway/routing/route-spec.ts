import type { ParameterizedContext } from 'koa';
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { OrganizationKind } from '../../db/schema.js';
import type { Caller, Recipient } from './caller.js';
import type { ApiVersion } from './versions.js';
import type { ObjectStorage } from '../../storage/object-storage.js';
import type { MailSender } from '../../mail/sender.js';
import type { SecretBox } from '../../keys/secret-box.js';
import type { KeyedHasher } from '../../keys/server-keys.js';

/** 'fdx': the FDX API's own rule (auth/require-fdx-scope.ts); 'recipient': a client's own token, which carries no scope. */
export type Access = 'read' | 'write' | 'fdx' | 'recipient';

/**
 * One gateway operation: its path, the versions that have it, what credential and scope it
 * needs, and zod schemas for its input and output. The router and the served OpenAPI
 * document are both generated from these, so they cannot drift apart.
 */
export interface RouteSpec<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType> {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa-router syntax: /v1/donations/:id */
  path: string;
  summary: string;
  tag: string;
  versions: readonly ApiVersion[];
  /**
   * Versioned by its path (the FDX API's /fdx/v6), not by Api-Version: the header is neither
   * read nor echoed there, and the generated document does not list it.
   */
  pathVersioned?: boolean;
  /** Which IP-restriction setting applies (see config ip_restricted_areas). */
  area: string;
  access: Access;
  /** 'client': the data recipient's own client-credentials token (the FDX Consent API). */
  credentials: 'any' | 'access_token' | 'client';
  params?: P;
  query?: Q;
  /** A different query schema for some versions (parameters added later are unknown before). */
  queryByVersion?: Partial<Record<ApiVersion, z.ZodType>>;
  /** JSON request body, for writes. */
  body?: z.ZodType;
  /** A different body schema for some versions (an older document's shapes). */
  bodyByVersion?: Partial<Record<ApiVersion, z.ZodType>>;
  /** Success status (200 by default; 201 for creations, with a Location; 204 for no content, the handler returning nothing). */
  status?: number;
  location?: (result: unknown) => string;
  /**
   * Also answers 200 with a resource that already existed (a Connect asked for again, a grant
   * captured before): the handler returns existing(body) then, and the document lists both.
   */
  answersExisting?: true;
  /**
   * Takes an `Idempotency-Key` header (docs/api.md, "Idempotency"): every creating POST sets it.
   * The handler then runs in the key's transaction (its `db`), so whatever it writes must go
   * through that `db`.
   */
  idempotent?: true;
  /**
   * The organization kinds whose credentials may call it (the DAF APIs: fund providers). Without
   * it, nonprofits and fund providers may (auth/require-caller-kind.ts, DEFAULT_CALLERS).
   */
  callers?: readonly OrganizationKind[];
  /** Binary representations by media type (a file download); the JSON response schema is then unused. */
  media?: readonly string[];
  /** Response schema per version (the same for all when given once). */
  response: z.ZodType | Partial<Record<ApiVersion, z.ZodType>>;
  errors: readonly number[];
  handler(input: HandlerInput<z.output<P>, z.output<Q>>): Promise<unknown>;
}

export interface HandlerInput<P, Q> {
  ctx: ParameterizedContext;
  db: Db;
  /** Who calls, on every route but those that take a client's own token (credentials 'client'). */
  caller: Caller;
  /** Who calls on the routes that take a client's own token: the data recipient. */
  recipient: Recipient | undefined;
  version: ApiVersion;
  params: P;
  query: Q;
  /** The parsed JSON body (validated by spec.body when given). */
  body: unknown;
  services: GatewayServices;
}

/** What write operations need beyond the database. */
export interface GatewayServices {
  mail: MailSender;
  /** The deployment profile: webhook targets are stricter in production. */
  profile: 'dev' | 'production';
  /** Seals secrets stored at rest (webhook signing secrets). */
  box: SecretBox;
  /** Keyed hashes of DAF codes (the rotating hashing key). */
  keys: KeyedHasher;
  /** The largest disbursement, in cents (max_disbursement_cents); unset, the service's own maximum. */
  maxDisbursementCents?: number;
  /** Object storage: mail batches' uploads (docs/gift-processing.md). */
  storage: ObjectStorage;
  /** The largest mail batch upload through the folder storage's upload route (mail_batch_max_bytes); unset, 512 MiB. */
  mailBatchMaxBytes?: number;
}

/** Preserves the generic parameters of a spec literal. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType>(spec: RouteSpec<P, Q>): RouteSpec<P, Q> {
  return spec;
}

/** A handler's answer of a resource that already existed: 200 instead of the route's creating status. */
export class Existing {
  constructor(readonly body: unknown) {}
}

export function existing(body: unknown): Existing {
  return new Existing(body);
}
