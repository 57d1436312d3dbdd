import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/registry.js';
import { unknownCommandHint } from '../../src/cli/suggest.js';

describe('the "did you mean" of a mistyped admin command', () => {
  it('names the nearest command, or every one equally near, and nothing for a word near none', () => {
    expect(unknownCommandHint(['api-key', 'revok'], COMMANDS)).toBe('did you mean "api-keys revoke"?');
    expect(unknownCommandHint(['orgs', 'lst'], COMMANDS)).toBe('did you mean "orgs list"?');
    expect(unknownCommandHint(['users', 'isable'], COMMANDS)).toBe('did you mean "users disable"?');
    // Two commands two edits away from what was typed: both are offered.
    expect(unknownCommandHint(['users', 'sable'], COMMANDS)).toBe('did you mean "users disable" or "users enable"?');
    expect(unknownCommandHint(['frobnicate'], COMMANDS)).toBe('');
    expect(unknownCommandHint(['deploy', 'now'], COMMANDS)).toBe('');
  });
});
