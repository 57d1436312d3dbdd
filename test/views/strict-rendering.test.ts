import { describe, expect, it } from 'vitest';
import type { ViewModels } from '../../src/views/models.js';
import { createViewEnvironment, renderView } from '../../src/views/render.js';

/**
 * Pages render strictly in the dev profile and in tests: a value a template outputs that the
 * page did not give it fails the render, so a misspelt name cannot ship as an empty string.
 * Production renders the same page, the missing value as nothing.
 */

const errorPage = {
  sandbox: false,
  environment: 'production',
  title: 'Not found',
  text: 'There is no such page.',
  requestId: 'req-1',
} satisfies ViewModels['error.njk'];

describe('strict page rendering', () => {
  it('fails on a misspelt variable in strict mode, renders it empty in production mode', () => {
    const template = '<p>{{ titel }}</p>';
    expect(() => createViewEnvironment({ strict: true }).renderString(template, { title: 'Hello' })).toThrow(
      /attempted to output null or undefined value/,
    );
    expect(createViewEnvironment({ strict: false }).renderString(template, { title: 'Hello' })).toBe('<p></p>');
  });

  it('renders the pages strictly under test: a page missing a value it shows fails', () => {
    const { title: _omitted, ...withoutTitle } = errorPage;
    expect(() => renderView('error.njk', withoutTitle as unknown as ViewModels['error.njk'])).toThrow(
      /attempted to output null or undefined value/,
    );
    expect(renderView('error.njk', errorPage)).toContain('Not found');
    // The production environment renders the same page, the title empty.
    const lenient = createViewEnvironment({ strict: false }).render('error.njk', withoutTitle);
    expect(lenient).toContain('There is no such page.');
  });

  it('reads a missing value as false in a condition and as empty in a loop, strict or not', () => {
    const template =
      '{% if misspelt %}yes{% else %}no{% endif %}{% for x in missing %}{{ x }}{% endfor %}{% if user.name %}{{ user.name }}{% endif %}';
    for (const strict of [true, false]) expect(createViewEnvironment({ strict }).renderString(template, {})).toBe('no');
  });
});
