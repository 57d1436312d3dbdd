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
 * Why a new password is refused, in words for the person choosing it, or undefined when it
 * is acceptable: long enough, not absurdly long, not the account's own address and not on
 * the list of common passwords.
 */
export function passwordProblem(password: string, email?: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Choose a password of at most ${MAX_PASSWORD_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (email && (lower === email.toLowerCase() || lower === email.toLowerCase().split('@')[0])) return 'Choose a password that is not your e-mail address.';
  if (common().has(lower)) return 'That password is on a list of common passwords; choose another.';
  return undefined;
}

/** Throws the 400 domain error the CLI and pages show when a new password is refused. */
export function requireAcceptablePassword(password: string, email?: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw invalid(problem);
}
