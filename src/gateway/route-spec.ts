import type { ParameterizedContext } from 'koa';
import type { z } from 'zod';
import type { Db } from '../db/database.js';
import type { Caller } from './auth/caller.js';
import type { Access } from './auth/require-scope.js';
import type { ApiVersion } from './versions.js';

/**
 * One gateway operation: its path, the versions that have it, what credential and scope it
 * needs, and zod schemas for its input and output. The router and the served OpenAPI
 * document are both generated from these, so they cannot drift apart.
 */
export interface RouteSpec<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType> {
  operationId: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Koa-router syntax: /v1/donations/:id */
  path: string;
  summary: string;
  tag: string;
  versions: readonly ApiVersion[];
  /** Which IP-restriction setting applies (see config ip_restricted_areas). */
  area: string;
  access: Access;
  credentials: 'any' | 'access_token';
  params?: P;
  query?: Q;
  /** A different query schema for some versions (parameters added later are unknown before). */
  queryByVersion?: Partial<Record<ApiVersion, z.ZodType>>;
  /** Response schema per version (the same for all when given once). */
  response: z.ZodType | Partial<Record<ApiVersion, z.ZodType>>;
  errors: readonly number[];
  handler(input: HandlerInput<z.output<P>, z.output<Q>>): Promise<unknown>;
}

export interface HandlerInput<P, Q> {
  ctx: ParameterizedContext;
  db: Db;
  caller: Caller;
  version: ApiVersion;
  params: P;
  query: Q;
}

/** Preserves the generic parameters of a spec literal. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType>(spec: RouteSpec<P, Q>): RouteSpec<P, Q> {
  return spec;
}
