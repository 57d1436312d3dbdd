import { z } from 'zod';
import { captureGrant, captureRecurringGrant, type CaptureInput } from '../../giving/grant-capture-service.js';
import { defineRoute, existing } from '../routing/route-spec.js';
import { GrantByVersion, grantView } from './grant-view.js';
import { GIVING_CALLERS } from './callers.js';
import { RecurringGrant, toRecurringGrant } from './recurring-view.js';

/** Capturing an authorized workflow session (docs/giving.md, "Capturing grants"). */

// Lengths are cut, never refused (the published rule): no max here.
const Address = z
  .object({
    line1: z.string().optional(),
    line2: z.string().optional(),
    city: z.string().optional(),
    state: z.string().optional(),
    postalCode: z.string().optional(),
  })
  .strict();

const captureFields = {
  workflowSessionId: z.string().min(1).max(100),
  // Numbers as published; whole cents and dollars are the service's 400s, with their reasons.
  amount: z.number(),
  applicationFeeAmount: z.number().optional(),
  donor: z
    .object({
      firstName: z.string().optional(),
      lastName: z.string().optional(),
      email: z.string().optional(),
      phone: z.string().optional(),
      address: Address.optional(),
    })
    .strict()
    .optional(),
  note: z.string().optional(),
  designation: z.string().optional(),
};

const GrantCapture = z.object(captureFields).strict();
const RecurringGrantCapture = z.object({ ...captureFields, frequency: z.enum(['MONTHLY']) }).strict();

function inputOf(body: z.output<typeof GrantCapture>): CaptureInput {
  return body as CaptureInput;
}

const common = {
  versions: ['2026-04-01', '2026-01-15'],
  area: 'grants',
  access: 'write',
  credentials: 'any',
  callers: GIVING_CALLERS,
  idempotent: true,
  status: 201,
  errors: [400, 401, 403, 404, 409, 410],
} as const;

export const grantCaptureRoutes = [
  defineRoute({
    ...common,
    operationId: 'create-grant',
    method: 'post',
    path: '/v1/grants',
    summary: "Capture a donor's authorized workflow session as a grant (200 with the grant captured before)",
    tag: 'Grants',
    body: GrantCapture,
    answersExisting: true,
    location: (result) => `/v1/grants/${(result as { id: string }).id}`,
    response: GrantByVersion,
    async handler({ db, caller, body, services, version, ctx }) {
      const deps = { ...services, log: ctx.state.log };
      const { grant, created } = await captureGrant(db, deps, caller, inputOf(body as z.output<typeof GrantCapture>));
      const view = await grantView(db, grant, version);
      return created ? view : existing(view);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'create-recurring-grant',
    method: 'post',
    path: '/v1/recurring_grants',
    summary: "Capture a donor's authorized monthly workflow session as a recurring grant and its first grant",
    tag: 'recurring_grants',
    body: RecurringGrantCapture,
    location: (result) => `/v1/recurring_grants/${(result as { id: string }).id}`,
    response: RecurringGrant,
    async handler({ db, caller, body, services, ctx }) {
      const { frequency: _, ...rest } = body as z.output<typeof RecurringGrantCapture>;
      return toRecurringGrant(await captureRecurringGrant(db, { ...services, log: ctx.state.log }, caller, inputOf(rest)));
    },
  }),
];
