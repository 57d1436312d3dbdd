import { z } from 'zod';

/**
 * The FDX consent request a bank-data client pushes as RFC 9396 `authorization_details` of type
 * `fdx_v1.0` (docs/api.md, "FDX bank-data API", Consents): what it may ask for here, and why a
 * request is refused. Pure: the authorization endpoint parses with it before anything is stored,
 * and answers a refusal as `invalid_authorization_details` with the error's description.
 */

export const FDX_AUTHORIZATION_DETAILS_TYPE = 'fdx_v1.0';
export const FDX_DURATION_TYPES = ['ONE_TIME', 'TIME_BOUND', 'PERSISTENT'] as const;
/** The data clusters this data provider serves, per resource type; anything else is refused. */
export const OFFERED_CLUSTERS = {
  ACCOUNT: ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'],
  CUSTOMER: ['CUSTOMER_CONTACT'],
} as const;
/** At most a year (PERSISTENT included: reauthorization after a year, as CFPB 1033 asks). */
export const MAX_DURATION_DAYS = 365;
export const MAX_LOOKBACK_DAYS = 730;
/** The lookback of a consent whose request named none. */
export const DEFAULT_LOOKBACK_DAYS = 365;
const MAX_RESOURCES = 10;

export type FdxDurationType = (typeof FDX_DURATION_TYPES)[number];
export type FdxResourceType = keyof typeof OFFERED_CLUSTERS;
export type FdxDataCluster = (typeof OFFERED_CLUSTERS)[FdxResourceType][number];

export interface FdxRequestedResource {
  resourceType: FdxResourceType;
  dataClusters: FdxDataCluster[];
}

/** A valid request, its lookback resolved (DEFAULT_LOOKBACK_DAYS when absent). */
export interface FdxConsentRequest {
  durationType: FdxDurationType;
  /** Days; absent for ONE_TIME, and for PERSISTENT when the client named none (then 365). */
  durationPeriod?: number;
  lookbackPeriod: number;
  resources: FdxRequestedResource[];
}

/** A refused request: `description` is the RFC 9396 error_description, naming the field and the rule. */
export class InvalidAuthorizationDetails extends Error {
  readonly error = 'invalid_authorization_details';
  constructor(readonly description: string) {
    super(description);
    this.name = 'InvalidAuthorizationDetails';
  }
}

/** A value quoted for a description: never more than 40 characters of what the client sent. */
const quote = (value: unknown) => JSON.stringify(String(value).slice(0, 40));
const days = (min: number, max: number) => {
  const rule = `must be a whole number of days from ${min} to ${max}`;
  return z.number({ error: rule }).int({ error: rule }).min(min, { error: rule }).max(max, { error: rule });
};
const offered = (type: string) => (OFFERED_CLUSTERS as Record<string, readonly string[]>)[type];

const Resource = z.strictObject({
  resourceType: z.string({ error: 'must be ACCOUNT or CUSTOMER' }).refine((t) => offered(t) !== undefined, {
    error: (i) => `${quote(i.input)} is not served by this data provider: ACCOUNT or CUSTOMER`,
  }),
  dataClusters: z
    .array(z.string({ error: 'must be data cluster names' }), { error: 'must be an array of data cluster names' })
    .min(1, { error: 'must name at least one data cluster' }),
});

const Request = z
  .strictObject({
    durationType: z.enum(FDX_DURATION_TYPES, { error: 'must be ONE_TIME, TIME_BOUND or PERSISTENT' }),
    durationPeriod: days(1, MAX_DURATION_DAYS).optional(),
    lookbackPeriod: days(0, MAX_LOOKBACK_DAYS).optional(),
    resources: z
      .array(Resource, { error: 'must be an array of resources' })
      .min(1, { error: 'must name at least one resource' })
      .max(MAX_RESOURCES, { error: `must name at most ${MAX_RESOURCES} resources` }),
  })
  .superRefine((request, ctx) => {
    if (request.durationType === 'TIME_BOUND' && request.durationPeriod === undefined)
      ctx.addIssue({ code: 'custom', path: ['durationPeriod'], message: 'is required when durationType is TIME_BOUND' });
    if (request.durationType === 'ONE_TIME' && request.durationPeriod !== undefined)
      ctx.addIssue({ code: 'custom', path: ['durationPeriod'], message: 'must be absent when durationType is ONE_TIME' });
    const seen = new Set<string>();
    request.resources.forEach((resource, i) => {
      if (seen.has(resource.resourceType))
        ctx.addIssue({
          code: 'custom',
          path: ['resources', i, 'resourceType'],
          message: `${resource.resourceType} is named twice: one entry per resource type`,
        });
      seen.add(resource.resourceType);
      const allowed = offered(resource.resourceType) ?? [];
      const clusters = new Set<string>();
      resource.dataClusters.forEach((cluster, j) => {
        const path = ['resources', i, 'dataClusters', j];
        if (clusters.has(cluster)) ctx.addIssue({ code: 'custom', path, message: `${quote(cluster)} is named twice` });
        else if (!allowed.includes(cluster))
          ctx.addIssue({
            code: 'custom',
            path,
            message: `${quote(cluster)} is not offered by this data provider for ${resource.resourceType} (${allowed.join(', ')})`,
          });
        clusters.add(cluster);
      });
    });
  });

function fieldOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (field, key) => (typeof key === 'number' ? `${field}[${key}]` : `${field}.${String(key).slice(0, 40)}`),
    'authorization_details[0].consentRequest',
  );
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.slice(0, 3).map(quote).join(', ') + (issue.keys.length > 3 ? ', …' : '');
    return `${fieldOf(issue.path)} has unknown members (${keys}): this server accepts only the members FDX defines there`;
  }
  return `${fieldOf(issue.path)} ${issue.message}`;
}

/**
 * Parses the `authorization_details` JSON (already parsed from the request) into the one FDX
 * consent request it must hold, or throws InvalidAuthorizationDetails naming the first rule broken.
 */
export function parseFdxAuthorizationDetails(value: unknown): FdxConsentRequest {
  if (!Array.isArray(value)) throw new InvalidAuthorizationDetails('authorization_details must be a JSON array');
  if (value.length !== 1)
    throw new InvalidAuthorizationDetails(
      `authorization_details must hold exactly one element of type ${FDX_AUTHORIZATION_DETAILS_TYPE}, not ${value.length}`,
    );
  const element: unknown = value[0];
  if (typeof element !== 'object' || element === null || Array.isArray(element))
    throw new InvalidAuthorizationDetails('authorization_details[0] must be an object');
  const { type, consentRequest } = element as Record<string, unknown>;
  if (type !== FDX_AUTHORIZATION_DETAILS_TYPE)
    throw new InvalidAuthorizationDetails(
      `authorization_details[0].type ${quote(type)} is not accepted: this server accepts only type ${FDX_AUTHORIZATION_DETAILS_TYPE}`,
    );
  if (typeof consentRequest !== 'object' || consentRequest === null || Array.isArray(consentRequest))
    throw new InvalidAuthorizationDetails('authorization_details[0].consentRequest must be an object');
  const parsed = Request.safeParse(consentRequest);
  if (!parsed.success) throw new InvalidAuthorizationDetails(describeIssue(parsed.error.issues[0]!));
  const { durationType, durationPeriod, lookbackPeriod, resources } = parsed.data;
  return {
    durationType,
    ...(durationPeriod === undefined ? {} : { durationPeriod }),
    lookbackPeriod: lookbackPeriod ?? DEFAULT_LOOKBACK_DAYS,
    resources: resources.map((r) => ({
      resourceType: r.resourceType as FdxResourceType,
      dataClusters: r.dataClusters as FdxDataCluster[],
    })),
  };
}
