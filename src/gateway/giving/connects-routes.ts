import { z } from 'zod';
import { connectOf, createOrGetConnect, type ConnectRow } from '../../giving/connects-service.js';
import { defineRoute, existing } from '../routing/route-spec.js';
import { actorOf, GIVING_CALLERS } from './callers.js';

const StringMap = z.record(z.string(), z.string());

const Connect = z.object({
  id: z.string(),
  name: z.string().optional(),
  apiKey: z.string().describe('Deprecated: always empty. API keys come from the dashboard (docs/giving.md, "Connects").'),
  active: z.boolean(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  createdBy: z.string().optional(),
  archived: z.boolean(),
  metadata: StringMap,
});

const CreateConnect = z
  .object({
    organization_id: z.string().min(1).max(100),
    contact: z
      .object({
        email: z.string().email().max(255),
        phone: z.string().max(255).optional(),
        first_name: z.string().max(255).optional(),
        last_name: z.string().max(255).optional(),
      })
      .strict(),
    name: z.string().max(255).optional(),
    metadata: z
      .record(z.string().max(40), z.string().max(500))
      .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys')
      .optional(),
  })
  .strict();

function toConnect(row: ConnectRow) {
  return {
    id: row.id,
    name: row.name,
    // Never a secret: the published member is deprecated (docs/giving.md, "Connects").
    apiKey: '',
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.created_by === null ? {} : { createdBy: row.created_by }),
    archived: false,
    metadata: row.metadata,
  };
}

const common = {
  tag: 'Connects',
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grants',
  credentials: 'any',
  callers: GIVING_CALLERS,
} as const;

export const connectRoutes = [
  defineRoute({
    ...common,
    operationId: 'create-connect',
    method: 'post',
    path: '/v1/connects',
    summary: 'Create the connect for a nonprofit of the directory, or get the one that exists',
    access: 'write',
    idempotent: true,
    body: CreateConnect,
    status: 201,
    answersExisting: true,
    location: (result) => `/v1/connects/${(result as { id: string }).id}`,
    response: Connect,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, body }) {
      const input = body as z.output<typeof CreateConnect>;
      const { contact, organization_id: organizationId, name, metadata } = input;
      const { connect, created } = await createOrGetConnect(
        db,
        {
          organizationId: caller.organizationId,
          organizationKind: caller.organizationKind,
          environment: caller.environment,
          createdBy: actorOf(caller),
        },
        {
          organizationId,
          name,
          metadata,
          contact: Object.fromEntries(Object.entries(contact).filter(([, v]) => v !== undefined)) as Record<string, string>,
        },
      );
      return created ? toConnect(connect) : existing(toConnect(connect));
    },
  }),
  defineRoute({
    ...common,
    operationId: 'get-connect',
    method: 'get',
    path: '/v1/connects/:id',
    summary: "Get one of the caller's connects",
    access: 'read',
    params: z.object({ id: z.string().min(1).max(100) }),
    response: Connect,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      return toConnect(await connectOf(db, caller, params.id));
    },
  }),
];
