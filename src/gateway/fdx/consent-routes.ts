import { z } from 'zod';
import { findConsentOfRecipient, type RecipientConsent, type RevocationOutcome } from '../../authorizations/fdx-consents.js';
import type { Db } from '../../db/database.js';
import { DomainError, notFound } from '../../errors/domain-error.js';
import type { Recipient } from '../routing/caller.js';
import { defineRoute } from '../routing/route-spec.js';
import { FDX_ROUTE } from './account-routes.js';
import { consentParties, revokeConsentAsRecipient } from './consent-service.js';
import { ConsentGrant, ConsentRevocationList, ConsentRevocationRequest, toConsentGrant, toRevocationList } from './consent-shapes.js';

/**
 * The FDX 6.3 Consent API (docs/api.md, "FDX bank-data API", Consent API): a data recipient reads
 * and revokes the consents its users granted it. Another recipient's consent, an unknown id and
 * a malformed one are the same 404, so ids cannot be probed.
 */

const CONSENT_ID = /^[A-Za-z0-9_-]{22}$/;
const ConsentParams = z.object({ consentId: z.string().describe('The consentId') });

const consentNotFound = () => notFound('No consent with this id was granted to this data recipient.');

async function requireConsent(db: Db, recipient: Recipient | undefined, consentId: string): Promise<RecipientConsent> {
  const consent =
    recipient && CONSENT_ID.test(consentId)
      ? await findConsentOfRecipient(db, recipient.environment, recipient.clientId, consentId)
      : undefined;
  if (!consent) throw consentNotFound();
  return consent;
}

const REFUSED: Partial<Record<RevocationOutcome, () => DomainError>> = {
  'not-found': consentNotFound,
  'already-revoked': () => new DomainError('conflict', 'The consent is already revoked.'),
  expired: () => new DomainError('conflict', 'The consent has expired, so there is nothing left to revoke.'),
};

/** The recipient's own client-credentials token (private_key_jwt + DPoP), from inside its allow-list. */
const CONSENT_ROUTE = { ...FDX_ROUTE, access: 'recipient', credentials: 'client', tag: 'FDX Consents', params: ConsentParams } as const;

export const consentRoutes = [
  defineRoute({
    ...CONSENT_ROUTE,
    operationId: 'getConsentGrant',
    method: 'get',
    path: '/fdx/v6/consents/:consentId',
    summary: 'A consent granted to the calling data recipient: its parties, duration, lookback and resources',
    response: ConsentGrant,
    errors: [401, 403, 404],
    async handler({ db, recipient, params }) {
      const consent = await requireConsent(db, recipient, params.consentId);
      return toConsentGrant(consent, await consentParties(db, consent.environment, consent.clientId, consent.organizationId));
    },
  }),
  defineRoute({
    ...CONSENT_ROUTE,
    operationId: 'revokeConsentGrant',
    method: 'put',
    path: '/fdx/v6/consents/:consentId/revocation',
    summary: 'Revokes an active consent and the authorization it belongs to (409 when already revoked or expired)',
    body: ConsentRevocationRequest,
    status: 204,
    response: z.undefined(),
    errors: [400, 401, 403, 404, 409],
    async handler({ ctx, db, recipient, params, body }) {
      const { reason, initiator } = body as z.infer<typeof ConsentRevocationRequest>;
      if (!recipient || !CONSENT_ID.test(params.consentId)) throw consentNotFound();
      const outcome = await revokeConsentAsRecipient(
        db,
        recipient,
        params.consentId,
        { reason, initiator },
        { ip: ctx.state.clientIp ?? null, requestId: ctx.state.requestId ?? null },
      );
      const refused = REFUSED[outcome];
      if (refused) throw refused();
      return undefined;
    },
  }),
  defineRoute({
    ...CONSENT_ROUTE,
    operationId: 'getConsentRevocation',
    method: 'get',
    path: '/fdx/v6/consents/:consentId/revocation',
    summary: "A consent's revocation record: empty while it was never revoked",
    response: ConsentRevocationList,
    errors: [401, 403, 404],
    async handler({ db, recipient, params }) {
      return toRevocationList(await requireConsent(db, recipient, params.consentId));
    },
  }),
];
