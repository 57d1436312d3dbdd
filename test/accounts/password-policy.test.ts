import { describe, expect, it } from 'vitest';
import {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  passwordProblem,
  requireAcceptablePassword,
} from '../../src/accounts/password-policy.js';

describe('password policy', () => {
  it('accepts a long, uncommon passphrase', () => {
    expect(passwordProblem('tidal-grove-ledger-42', 'dana@example.org')).toBeUndefined();
  });

  it('refuses passwords shorter than the minimum and longer than the maximum', () => {
    expect(passwordProblem('a'.repeat(MIN_PASSWORD_LENGTH - 1))).toMatch(/at least 10 characters/);
    expect(passwordProblem('Zq8#'.repeat(3))).toBeUndefined();
    expect(passwordProblem('x'.repeat(MAX_PASSWORD_LENGTH + 1))).toMatch(/at most 1024/);
  });

  it('refuses the account address and its local part, in any case', () => {
    expect(passwordProblem('Dana.Whitfield@Example.org', 'dana.whitfield@example.org')).toMatch(/not your e-mail address/);
    expect(passwordProblem('DANA.WHITFIELD', 'dana.whitfield@example.org')).toMatch(/not your e-mail address/);
  });

  it('refuses the address with white space or invisible code points around or inside it, in other cases and compatibility forms', () => {
    const email = 'dana.whitfield@example.org';
    for (const password of [
      `${email} `,
      ` ${email}`,
      `\t${email}\n`,
      `Dana.Whitfield@Example.org `,
      `dana.whitfield @example.org`,
      'DANA.WHITFIELD  ',
      '\uff44\uff41\uff4e\uff41.whitfield@example.org',
      `${email}\u00a0`,
    ]) {
      expect(passwordProblem(password, email), JSON.stringify(password)).toMatch(/not your e-mail address/);
    }
    // Invisible code points (Default_Ignorable_Code_Point) are no more a new password than a space.
    for (const invisible of ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u034f', '\ufe0f', '\u{e0041}']) {
      const password = `dana.\u200b${invisible}whitfield@example.org${invisible}`;
      expect(passwordProblem(password, email), JSON.stringify(password)).toMatch(/not your e-mail address/);
    }
    expect(passwordProblem('pass\u200bword\u00ad123')).toMatch(/common passwords/);
    // Only the address itself and its local part: a password that merely contains them is a matter for the length rule.
    expect(passwordProblem(`${email} and more words`, email)).toBeUndefined();
  });

  it('refuses passwords from the shipped common list, whatever their case and white space', () => {
    expect(passwordProblem('password123 ')).toMatch(/common passwords/);
    expect(passwordProblem(' Password 123')).toMatch(/common passwords/);
    expect(passwordProblem('password123')).toMatch(/common passwords/);
    expect(passwordProblem('QwertyUiop')).toMatch(/common passwords/);
    expect(passwordProblem('1234567890')).toMatch(/common passwords/);
  });

  it('throws the 400 domain error the pages and CLI show', () => {
    expect(() => requireAcceptablePassword('short')).toThrow(expect.objectContaining({ code: 'invalid' }));
  });
});
