import { relyingParty } from './passkeys.js';

/** A page's passkey form (views/partials/passkey-sign-in.njk): where it posts, where it asks for options, its button. */
export interface PasskeyForm {
  action: string;
  optionsAction: string;
  label: string;
  /** `second-factor` when the passkey follows a password on the dashboard's sign-in. */
  step?: 'second-factor';
}

/** The form, when this dashboard can use passkeys at all (its host is a domain name). */
export function passkeyForm(deps: { origin: string; passkeyRpId?: string }, form: PasskeyForm): PasskeyForm | undefined {
  return relyingParty(deps) ? form : undefined;
}
