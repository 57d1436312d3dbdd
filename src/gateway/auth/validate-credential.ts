import type { Middleware } from 'koa';
import type { Db } from '../../db/database.js';
import { narrowToRole } from '../../accounts/scopes.js';
import { unauthorized } from '../routing/problems.js';
import { environmentOf } from '../routing/environment.js';
import { UseDebounce } from '../../audit/use-debounce.js';
import { consentStatus, type FdxConsentResource } from '../../authorizations/fdx-consent.js';
import type { HeldFdxConsent } from '../routing/caller.js';
import { touchApiKey, touchAuthorization, type AccessTokenRow } from './credential-repository.js';
import { wrongEnvironmentDetail } from './wrong-environment.js';

/**
 * The authorization's FDX consent, read with the token (one query): a revoked or expired consent
 * ends the token at its very next call, like a revoked authorization (docs/api.md, "FDX bank-data
 * API", Consents). Expiry is judged here, not only by the chores' sweep.
 */
function heldConsent(row: AccessTokenRow, now: number): HeldFdxConsent | 'ended' | undefined {
  if (!row.fdx_consent_id || !row.fdx_consent_status || !row.fdx_consent_expires_at) return undefined;
  if (consentStatus({ status: row.fdx_consent_status, expires_at: row.fdx_consent_expires_at }, now) !== 'ACTIVE') return 'ended';
  return {
    id: row.fdx_consent_id,
    lookbackPeriod: row.fdx_lookback_period ?? 0,
    resources: (row.fdx_consent_resources ?? []) as FdxConsentResource[],
  };
}

/** last_used_at is informational: written at most once a minute per key or authorization. */
const touched = new UseDebounce();

/**
 * Judges the credential on every call: an API key must be live; an access token must be
 * unexpired, its authorization live (not revoked, not past 365 days), its client still
 * registered, and for a user subject the approver still a member, whose current role
 * narrows the token's scopes, and its FDX consent (if it has one) still active. Anything else is
 * 401; one of the other environment says so.
 */
export function validateCredential(db: Db): Middleware {
  return async (ctx, next) => {
    const credential = ctx.state.credential!;
    const environment = environmentOf(ctx);
    if (credential.kind === 'api_key') {
      const key = credential.row;
      if (!key)
        throw unauthorized(
          (await wrongEnvironmentDetail(db, environment, 'api_key', ctx.state.bearer!)) ?? 'The API key is unknown or revoked.',
          true,
        );
      ctx.state.caller = {
        kind: 'api_key',
        environment,
        organizationId: key.organization_id,
        organizationKind: key.organization_kind,
        keyId: key.id,
      };
      if (touched.due(key.id)) void touchApiKey(db, key.id).catch(() => undefined);
      return next();
    }
    const invalid = () => unauthorized('The access token is invalid, expired or revoked.', true);
    // A client's own token serves the Consent API alone (validate-client-token.ts).
    if (credential.kind !== 'access_token') throw invalid();
    const row = credential.row;
    const now = Date.now();
    if (!row)
      throw unauthorized(
        (await wrongEnvironmentDetail(db, environment, 'access_token', ctx.state.bearer!)) ??
          'The access token is invalid, expired or revoked.',
        true,
      );
    if (!row || row.payload.kind !== 'AccessToken' || !row.payload.exp || row.payload.exp * 1000 <= now) throw invalid();
    if (
      !row.grant_id ||
      !row.user_id ||
      !row.organization_id ||
      !row.organization_kind ||
      row.revoked_at ||
      !row.authorization_expires_at ||
      row.authorization_expires_at.getTime() <= now
    )
      throw invalid();
    if (!row.client_id || row.client_id !== row.authorization_client_id) throw invalid();
    const fdxConsent = heldConsent(row, now);
    if (fdxConsent === 'ended') throw invalid();
    const granted = (row.payload.scope ?? '').split(' ').filter(Boolean);
    let scopes: string[] = granted;
    if (row.subject_type === 'user') {
      if (!row.role || row.user_disabled_at)
        throw unauthorized('The user who approved this authorization is no longer a member of the organization.', true);
      scopes = narrowToRole(granted, row.role);
    }
    ctx.state.caller = {
      kind: 'access_token',
      environment,
      organizationId: row.organization_id,
      organizationKind: row.organization_kind,
      clientId: row.client_id,
      grantId: row.grant_id,
      subjectType: row.subject_type ?? 'user',
      userId: row.user_id,
      scopes: new Set(scopes),
      ...(fdxConsent ? { fdxConsent } : {}),
      ...(row.client_profile === 'fapi2' ? { fdxConsentRequired: true as const } : {}),
    };
    if (touched.due(row.grant_id)) void touchAuthorization(db, row.grant_id).catch(() => undefined);
    await next();
  };
}
