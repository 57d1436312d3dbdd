import type { Executor } from '../../db/executor.js';
import type { Environment } from '../../db/schema.js';
import type { SecretBox } from '../../keys/secret-box.js';
import type { SubscriptionStatus } from '../../db/schema-events.js';
import { prefixedId } from '../../db/ids.js';
import { invalid, notFound } from '../../errors/domain-error.js';
import { generateSigningSecret, isValidSigningSecret } from '../../webhooks/signing-secret.js';
import { targetProblem, type Profile } from '../../webhooks/targets.js';
import { findSubscription, insertSubscription, setSubscriptionStatus, type SubscriptionRow } from './repository.js';

/**
 * Event subscriptions, for the API (POST/PATCH /v1/event_subscriptions) and the dashboard's
 * webhooks page alike: where a webhook may be sent (webhooks/targets.ts), its signing secret
 * (given, or generated and returned once), sealed at rest.
 */
export interface SubscriptionScope {
  environment: Environment;
  organizationId: string;
}

export interface SubscriptionDeps {
  db: Executor;
  box: SecretBox;
  /** The dev profile allows http URLs on loopback; production only https to public addresses. */
  profile: Profile;
}

export async function subscribe(deps: SubscriptionDeps, scope: SubscriptionScope, input: { url: string; category: string; signingSecret?: string }): Promise<{ row: SubscriptionRow; generatedSecret?: string }> {
  const problem = targetProblem(input.url, deps.profile);
  if (problem) throw invalid(`${problem}.`);
  if (input.signingSecret !== undefined && !isValidSigningSecret(input.signingSecret)) throw invalid('signing_secret must be a Standard Webhooks secret: whsec_ followed by the base64 of 24 to 64 random bytes.');
  const generatedSecret = input.signingSecret === undefined ? generateSigningSecret() : undefined;
  const row = await insertSubscription(deps.db, {
    id: prefixedId('evtsub'),
    environment: scope.environment,
    organization_id: scope.organizationId,
    url: input.url,
    category: input.category,
    signing_secret: deps.box.seal(input.signingSecret ?? generatedSecret!),
  });
  return { row, generatedSecret };
}

/** Activates, disables or deletes a subscription of the scope; a deleted one stays deleted. */
export async function changeSubscriptionStatus(db: Executor, scope: SubscriptionScope, id: string, status: Exclude<SubscriptionStatus, 'requires_attention'>): Promise<SubscriptionRow> {
  const row = await findSubscription(db, scope, id);
  if (!row) throw notFound('The event subscription was not found.');
  if (status === row.status) return row;
  if (row.status === 'deleted') throw invalid('A deleted subscription cannot be changed.');
  return setSubscriptionStatus(db, row.id, status);
}
