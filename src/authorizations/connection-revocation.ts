import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { revokeAuthorizationIn } from './authorizations.js';
import type { FdxConsent, FdxPartyType } from './fdx-consent.js';
import { revokeConsentOfGrantIn } from './fdx-consents.js';

/**
 * An application disconnected on a connected applications page (docs/oauth.md, "Connected
 * applications"): the authorization ends with every token it issued and, when it holds a
 * bank-data consent, the consent is revoked with it (USER_ACTION, by the initiator the page
 * names), so its recipient reads it REVOKED through the Consent API. One transaction, with the
 * page's audit rows.
 */

export interface ConnectionRevocation {
  environment: Environment;
  grantId: string;
  /** The authorization's organization: a consent is revoked only as that organization's. */
  organizationId: string;
  /** Who ends a bank-data consent, in FDX's words: the person who approved it, or the organization (the data provider). */
  initiator: FdxPartyType;
  /**
   * Writes the audit rows inside the revocation's transaction (authorizations/ imports no audit/,
   * so the caller brings them: docs/layout.md, "Boundaries the linter holds"). `authorization`:
   * whether it was still live; `consent`: the consent revoked with it, if one was.
   */
  audit: (trx: Executor, ended: { authorization: boolean; consent?: FdxConsent }) => Promise<void>;
}

export const CONNECTION_REVOCATION_REASON = 'USER_ACTION';

export async function revokeConnection(db: Db, input: ConnectionRevocation): Promise<void> {
  await inTransaction(db, async (trx) => {
    // The consent first, then the authorization: the order the Consent API's revocation locks them in.
    const consent = await revokeConsentOfGrantIn(trx, {
      environment: input.environment,
      grantId: input.grantId,
      organizationId: input.organizationId,
      reason: CONNECTION_REVOCATION_REASON,
      initiator: input.initiator,
    });
    const authorization = await revokeAuthorizationIn(trx, input.environment, input.grantId, 'revoked_by_user');
    await input.audit(trx, { authorization, consent });
  });
}
