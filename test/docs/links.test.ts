import { describe, expect, it } from 'vitest';
import { anchors, brokenLinks, documentationFiles, slug } from './markdown.js';

describe('links in README.md and docs/', () => {
  it('every relative link names a file that exists and, with #anchor, a heading it has', () => {
    const problems = documentationFiles().flatMap((file) => brokenLinks(file));
    expect(problems, `broken links:\n${problems.join('\n')}`).toEqual([]);
  });

  it('the checker itself reports a missing file and a missing anchor (and accepts good links)', () => {
    const files: Record<string, string> = {
      'docs/a.md':
        '# A\n\n## Two words\n\n[ok](b.md#the-b-section) [ok](#two-words) [ok](https://example.org/x)\n[gone](missing.md) [no anchor](b.md#nowhere) [self](#nope)\n\n```sh\n[in code](ignored.md)\n```\n',
      'docs/b.md': '# B\n\n## The `b` section\n',
    };
    const problems = brokenLinks('docs/a.md', (file) => files[file]);
    expect(problems).toEqual([
      'docs/a.md:6: missing.md: docs/missing.md does not exist',
      'docs/a.md:6: b.md#nowhere: docs/b.md has no heading with the anchor #nowhere',
      'docs/a.md:6: #nope: docs/a.md has no heading with the anchor #nope',
    ]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('OAuth 2.0 and OpenID Connect')).toBe('oauth-20-and-openid-connect');
    expect(slug('Donor-advised-fund APIs, events and webhooks')).toBe('donor-advised-fund-apis-events-and-webhooks');
    expect([...anchors('# X\n## Notes\n## Notes\n## `code` here\n')]).toEqual(['x', 'notes', 'notes-1', 'code-here']);
  });
});
