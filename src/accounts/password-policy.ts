import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import { invalid } from '../errors/domain-error.js';

/** NIST SP 800-63B asks for at least 8; a staff account that approves bank-data access gets 10. */
export const MIN_PASSWORD_LENGTH = 10;
/** argon2 would take longer ones, but nobody types them and they only cost hashing time. */
export const MAX_PASSWORD_LENGTH = 1024;

const COMMON_PASSWORDS_FILE = path.join(PROJECT_ROOT, 'src', 'accounts', 'common-passwords.txt');

let commonPasswords: Set<string> | undefined;

/** The shipped list of common passwords (docs/security.md, "Passwords"), read once. */
function common(): Set<string> {
  commonPasswords ??= new Set(
    fs
      .readFileSync(COMMON_PASSWORDS_FILE, 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#')),
  );
  return commonPasswords;
}

/**
 * A password as an attacker guessing it sees it: compatibility forms folded (NFKC: a
 * full-width or ligature letter is the letter), white space and invisible code points
 * (Unicode's Default_Ignorable_Code_Point: zero-width space, soft hyphen, joiners, variation
 * selectors) anywhere removed, lower case. The address with a trailing space, in capitals, with
 * a U+200B inside, or the list's `password123` spaced out is the same guess (docs/security.md,
 * "Passwords").
 */
const guessable = (text: string) =>
  text
    .normalize('NFKC')
    .replace(/[\s\p{Default_Ignorable_Code_Point}]+/gu, '')
    .toLowerCase();

/**
 * Why a new password is refused, in words for the person choosing it, or undefined when it
 * is acceptable: long enough, not absurdly long, not the account's own address nor its local
 * part and not on the list of common passwords, each compared as guessable() spells it.
 */
export function passwordProblem(password: string, email?: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Choose a password of at most ${MAX_PASSWORD_LENGTH} characters.`;
  const guess = guessable(password);
  if (email) {
    const address = guessable(email);
    if (guess === address || guess === address.slice(0, address.lastIndexOf('@')))
      return 'Choose a password that is not your e-mail address.';
  }
  if (common().has(guess)) return 'That password is on a list of common passwords; choose another.';
  return undefined;
}

/** Throws the 400 domain error the CLI and pages show when a new password is refused. */
export function requireAcceptablePassword(password: string, email?: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw invalid(problem);
}
