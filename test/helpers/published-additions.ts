import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { readDocument, type PublishedDocument } from './published-openapi.js';

/**
 * Every gateway response the published documents (spec/openapi) do not describe, but the
 * product gives on purpose, each with its reason. checkGatewayResponse (published-openapi.ts)
 * accepts a response only if its operation documents it or it is listed here, so a new entry
 * is a decision about the product's interface: keep the list short, and fix the product
 * instead wherever it should follow the document. Added error responses are still checked:
 * an application/problem+json body matching the document's ProblemDetails, whose `status` is
 * the response's.
 */

/** One published operation: its document, lower-case method and path template. */
export interface Operation {
  document: PublishedDocument;
  method: string;
  path: string;
}

/** An unknown Api-Version is refused before routing, on every /v1 path (docs/api.md, "Versions": "an unknown version is 400"). */
export const UNKNOWN_API_VERSION = {
  status: 400,
  reason: 'docs/api.md, Versions: an unknown Api-Version is 400; no document can describe a version it does not know.',
};

/**
 * A method and path the chosen document has no operation for: the product's generic 404
 * problem (a path that exists nowhere, or an operation absent from the requested version).
 */
export const UNKNOWN_OPERATION = {
  statuses: [404],
  reason: 'docs/api.md, Versions: "an operation absent from a version is a 404 there"; a path no document has is 404 too.',
};

/** Operations served under a version whose document lacks them, with another document's shape. */
export const BORROWED_OPERATIONS: (Operation & { reason: string })[] = [
  {
    document: '2023-01-01',
    method: 'get',
    path: '/v1/nonprofit/{ein}',
    reason:
      'docs/api.md, Resource gateway: served under both accepted versions with the shape of 2023-01-01.yaml; neither 2026 document has it.',
  },
];

/** The product's own operations on the API hosts, which no published document has. */
export const OWN_OPERATIONS: { method: string; path: string; reason: string; schema: object }[] = [
  {
    method: 'get',
    path: '/openapi.json',
    reason: "The gateway's own OpenAPI 3.1 document, generated from its route specs, per Api-Version (docs/api.md, Resource gateway).",
    schema: {
      type: 'object',
      required: ['openapi', 'info', 'paths'],
      properties: { openapi: { const: '3.1.0' }, paths: { type: 'object' } },
    },
  },
];

/**
 * FDX 6.3's Consent API (FDX's fdxapi.consent.yaml), served under /fdx/v6 beside the data
 * operations; the vendored fdx-v6.yaml describes the data operations only. Their successes are
 * checked against our served /openapi.json alone, their problems also against fdx-v6's
 * ProblemDetails, as every FDX problem is.
 */
export const FDX_CONSENT_OPERATIONS: (Operation & { reason: string })[] = [
  'get /consents/{consentId}',
  'put /consents/{consentId}/revocation',
  'get /consents/{consentId}/revocation',
].map((op) => {
  const [method, path] = op.split(' ') as [string, string];
  return {
    document: 'fdx-v6',
    method,
    path,
    reason: 'docs/api.md, FDX bank-data API, Consent API: the FDX 6.3 Consent API; the vendored document has no consent operations.',
  };
});

/**
 * Statuses an operation answers that its document does not list: on every operation, or on
 * the operations named as `<document> <METHOD> <template>`.
 */
export const ADDED_STATUSES: { status: number; operations: 'every' | string[]; reason: string }[] = [
  {
    status: 503,
    operations: 'every',
    reason: 'docs/api.md, Errors: a database outage is a 503 problem with Retry-After, never a wrong answer; the documents list 500 only.',
  },
  {
    status: 429,
    operations: ['2026-04-01 POST /v1/authorization_tokens/verify'],
    reason:
      'docs/security.md, Guessing DAF codes with concurrent verify attempts: verify attempts are rate-limited (a guessed code must not be brute-forced); the document lists no 429.',
  },
  {
    status: 412,
    operations: ['2026-04-01', '2026-01-15'].flatMap((version) =>
      ['complete', 'fail'].map((action) => `${version} POST /v1/simulations/inbound_transfers/{id}/${action}`),
    ),
    reason:
      'docs/grantmaking.md, Inbound transfers: a transfer completes or fails once, so a simulation of one no longer pending is refused as its cancel is (412); the document lists no refusal for the simulations.',
  },
  {
    status: 412,
    operations: ['complete', 'fail'].map((action) => `2026-04-01 POST /v1/simulations/disbursements/{id}/${action}`),
    reason:
      "docs/grantmaking.md, Disbursements: only a submitted disbursement completes or fails, once; a simulation of one in another status is refused (412), as the inbound transfers' simulations are; the document lists no refusal for them.",
  },
  {
    status: 409,
    // Every operation that takes an Idempotency-Key (its spec says `idempotent`) and whose document
    // lists no 409, in each version it is served in; read when used (the documents load lazily).
    get operations() {
      return idempotentWithoutConflict();
    },
    reason:
      'docs/api.md, Idempotency: an Idempotency-Key used before with another request is 409 on every creating POST; the documents list 409 on a few of them only.',
  },
];

function idempotentWithoutConflict(): string[] {
  return GATEWAY_ROUTES.filter((spec) => spec.idempotent).flatMap((spec) =>
    spec.versions.flatMap((version) => {
      const template = spec.path.replace(/:(\w+)/g, '{$1}');
      const documented = readDocument(version).paths[template]?.[spec.method]?.responses?.['409'];
      return documented ? [] : [`${version} ${spec.method.toUpperCase()} ${template}`];
    }),
  );
}

/** Is `status` on `op` one of ADDED_STATUSES? */
export function addedStatus(op: Operation, status: number) {
  const name = `${op.document} ${op.method.toUpperCase()} ${op.path}`;
  return ADDED_STATUSES.find((a) => a.status === status && (a.operations === 'every' || a.operations.includes(name)));
}
