/**
 * E-mail addresses as people type them (docs/accounts.md, "E-mail addresses"). One spelling
 * per address: Unicode NFC (so a name typed with a composed é and one with e and a combining
 * accent are the same account), surrounding white space removed, lower case. Control
 * characters and invisible formatting characters are refused: bidirectional controls
 * (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) make an address display as another
 * (on the members page, in the audit log, in a mail client), and zero-width characters make
 * two addresses look alike.
 */

/** Control (Cc), format (Cf: bidi controls, zero-width characters, soft hyphen, tags), line and paragraph separators, lone surrogates. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

export const UNSAFE_EMAIL =
  'An e-mail address cannot contain control characters or invisible formatting characters (such as direction marks or zero-width spaces). Type the address again rather than pasting it.';

/** The one spelling of what was typed: NFC, trimmed, lower case (lower-casing can decompose, so NFC again). */
export function canonicalEmail(input: string): string {
  return input.normalize('NFC').trim().toLowerCase().normalize('NFC');
}

/** True when the address holds a character no address may hold. */
export function hasUnsafeCharacters(email: string): boolean {
  return UNSAFE.test(email);
}
