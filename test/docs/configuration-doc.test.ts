import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_KEYS, envNameFor } from '../../src/config/schema.js';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/gen-config-doc.js';

/** docs/configuration.md is generated from the schema: the committed copy must be what the generator prints. */
describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` generates from the configuration schema', () => {
    const committed = fs.readFileSync(CONFIGURATION_DOC, 'utf8');
    const generated = renderConfigurationDoc();
    expect(committed === generated, 'docs/configuration.md is stale: run `npm run docs:config` and commit the result').toBe(true);
  });

  it('lists every setting with its environment variable', () => {
    const text = renderConfigurationDoc();
    for (const key of SETTING_KEYS) {
      const env = key === 'profile' ? 'ALMONER_PROFILE' : envNameFor(key);
      expect(text, key).toContain(`| \`${key}\` | \`${env}\` |`);
    }
  });
});
