import { describe, expect, it } from 'vitest';
import { canonicalEmail, hasUnsafeCharacters } from '../../src/accounts/email-address.js';
import { resetRequestAddress } from '../../src/accounts/password-resets.js';
import { normaliseEmail } from '../../src/accounts/service.js';

/** Every character class the address rules refuse, one example each. */
const UNSAFE = {
  'left-to-right embedding U+202A': '\u202a',
  'right-to-left override U+202E': '\u202e',
  'left-to-right isolate U+2066': '\u2066',
  'pop directional isolate U+2069': '\u2069',
  'left-to-right mark U+200E': '\u200e',
  'right-to-left mark U+200F': '\u200f',
  'Arabic letter mark U+061C': '\u061c',
  'zero-width space U+200B': '\u200b',
  'zero-width joiner U+200D': '\u200d',
  'word joiner U+2060': '\u2060',
  'soft hyphen U+00AD': '\u00ad',
  'tag character U+E0041': '\u{e0041}',
  NUL: '\u0000',
  escape: '\u001b',
  DEL: '\u007f',
  'C1 control U+0085': '\u0085',
  'line separator U+2028': '\u2028',
  'paragraph separator U+2029': '\u2029',
};

describe('e-mail addresses', () => {
  it('are stored in one spelling: NFC, trimmed, lower case', () => {
    // é typed as e and a combining acute accent, and as one character.
    expect(normaliseEmail(' Rene\u0301@Example.org ')).toBe('ren\u00e9@example.org');
    expect(normaliseEmail('REN\u00c9@example.org')).toBe('ren\u00e9@example.org');
    expect(canonicalEmail('A\u030a@x.org')).toBe('\u00e5@x.org');
    expect(normaliseEmail('dana.whitfield@example.org')).toBe('dana.whitfield@example.org');
  });

  it.each(Object.entries(UNSAFE))('refuses one with a %s anywhere in it, saying why (a 400)', (_, character) => {
    for (const typed of [`ad${character}min@example.org`, `admin@exa${character}mple.org`, `admin@example.org${character}x`]) {
      expect(hasUnsafeCharacters(canonicalEmail(typed)), JSON.stringify(typed)).toBe(true);
      expect(() => normaliseEmail(typed)).toThrow(
        expect.objectContaining({
          code: 'invalid',
          message: expect.stringContaining('cannot contain control characters or invisible formatting characters'),
        }),
      );
      expect(resetRequestAddress(typed)).toEqual({ problem: expect.stringContaining('cannot contain control characters') });
    }
  });

  it('the forgot-password form takes any shape with an @, in the stored spelling', () => {
    expect(resetRequestAddress(' Rene\u0301@Localhost ')).toEqual({ email: 'ren\u00e9@localhost' });
    expect(resetRequestAddress('not-an-address')).toEqual({ problem: 'Enter the e-mail address you sign in with.' });
    expect(resetRequestAddress(`${'a'.repeat(250)}@x.org`)).toEqual({ problem: 'Enter the e-mail address you sign in with.' });
  });

  it('takes addresses in other scripts, which are not invisible', () => {
    expect(normaliseEmail('δοκιμή@παράδειγμα.δοκιμή')).toBe('δοκιμή@παράδειγμα.δοκιμή');
    expect(normaliseEmail('用户@例子.广告')).toBe('用户@例子.广告');
  });
});
