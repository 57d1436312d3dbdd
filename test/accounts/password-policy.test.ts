import { describe, expect, it } from 'vitest';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem, requireAcceptablePassword } from '../../src/accounts/password-policy.js';

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

  it('refuses passwords from the shipped common list, whatever their case', () => {
    expect(passwordProblem('password123')).toMatch(/common passwords/);
    expect(passwordProblem('QwertyUiop')).toMatch(/common passwords/);
    expect(passwordProblem('1234567890')).toMatch(/common passwords/);
  });

  it('throws the 400 domain error the pages and CLI show', () => {
    expect(() => requireAcceptablePassword('short')).toThrow(expect.objectContaining({ code: 'invalid' }));
  });
});
