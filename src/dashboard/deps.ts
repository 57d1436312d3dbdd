import type { ObjectStorage } from '../storage/object-storage.js';
import type { PasswordParams } from '../accounts/passwords.js';
import type { Environment } from '../db/schema.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import type { Profile } from '../webhooks/targets.js';

/**
 * What the signed-in side of a dashboard host needs: the hosted pages' dependencies (database,
 * provider sessions, server keys, sign-in, attempt limits, secrets box, mail, work after the
 * response) plus password hashing and both dashboards' origins (links in e-mail point at the
 * environment an action was taken in).
 */
export interface DashboardDeps extends InteractionDeps {
  passwordParams: PasswordParams;
  dashboardOrigins: Readonly<Record<Environment, string>>;
  /** The running profile: where webhooks may be sent (loopback http in dev only). */
  profile: Profile;
  /**
   * This dashboard's dev alias (http://localhost:<port>), when it has one: it is at an IP
   * address, where WebAuthn makes no passkeys, so the Security page links there.
   */
  passkeysAt?: string;
  /** Object storage: the scans of mail items (docs/gift-processing.md). */
  storage: ObjectStorage;
}
