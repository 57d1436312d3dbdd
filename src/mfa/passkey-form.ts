import type { PasskeyForm } from '../views/models.js';
import { relyingParty } from './passkeys.js';

/** The form, when this dashboard can use passkeys at all (its host is a domain name). */
export function passkeyForm(deps: { origin: string; passkeyRpId?: string }, form: PasskeyForm): PasskeyForm | undefined {
  return relyingParty(deps) ? form : undefined;
}
