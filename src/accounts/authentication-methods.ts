/**
 * How a browser session was signed in, in the words of OpenID Connect: the `amr` values
 * (RFC 8176) and the `acr` level Almoner issues (docs/oauth.md, "Second factors and step-up").
 */

/** RFC 8176 method references: password, one-time code, hardware- or software-held key, several factors. */
export type AuthenticationMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mfa';

/** The two levels Almoner issues as `acr` and accepts in `acr_values`. */
export const ACR_ONE_FACTOR = 'urn:almoner:loa:1';
export const ACR_TWO_FACTORS = 'urn:almoner:loa:2';

/** The methods that count as a second factor (or, for a passkey, as both). */
const SECOND_FACTORS: readonly string[] = ['otp', 'hwk', 'swk'];

/** True when a session's methods include a second factor. */
export function hasSecondFactor(amr: readonly string[] | undefined): boolean {
  return (amr ?? []).some((method) => SECOND_FACTORS.includes(method));
}

/** The `acr` of a session signed in with `amr`. */
export function acrFor(amr: readonly string[] | undefined): string {
  return hasSecondFactor(amr) ? ACR_TWO_FACTORS : ACR_ONE_FACTOR;
}
