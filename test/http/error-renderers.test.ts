import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa, { type Context } from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { DomainError, forbidden } from '../../src/errors/domain-error.js';
import { htmlErrorPages } from '../../src/http/error-handler.js';
import { problemOf, sendOAuthProblem, type ErrorPage } from '../../src/http/problem.js';
import { appThrowing } from '../helpers/throwing-app.js';

/** One domain error, with headers and a title, as each surface renders it. */
const refused = () =>
  new DomainError('unauthenticated', 'The token has expired.', {
    title: 'Sign in again',
    headers: { 'WWW-Authenticate': 'Bearer realm="almoner", error="invalid_token"' },
    extensions: { error: 'invalid_token' },
  });

/** A layout that shows what the page renderer hands it, as text. */
const plainLayout = (ctx: Context, page: ErrorPage) => {
  ctx.status = page.status;
  ctx.type = 'text/html';
  ctx.body = `<h1>${page.title}</h1><p>${page.text}</p>`;
};

function pageApp(error: unknown) {
  const app = new Koa();
  app.silent = true;
  app.use(htmlErrorPages(plainLayout));
  app.use(() => {
    throw error;
  });
  return app.callback();
}

describe('the error mapper and its renderers', () => {
  it('renders a DomainError as problem+json with its headers, title and members', async () => {
    const res = await request(appThrowing(refused())).get('/');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="almoner", error="invalid_token"');
    expect(res.body).toEqual({
      type: 'about:blank',
      title: 'Sign in again',
      status: 401,
      detail: 'The token has expired.',
      code: 'unauthenticated',
      error: 'invalid_token',
    });
  });

  it('leaves the code out of a body a specification fixes', () => {
    expect(problemOf(forbidden('outside', { withoutCode: true })).toJSON()).toEqual({
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: 'outside',
    });
  });

  it('renders the same error as an OAuth error body, not stored', async () => {
    const app = new Koa();
    app.use((ctx) => sendOAuthProblem(ctx, refused(), 'invalid_token'));
    const res = await request(app.callback()).get('/');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="almoner", error="invalid_token"');
    expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The token has expired.' });
  });

  it('renders it as a page, in the layout it is given, for a browser', async () => {
    const res = await request(pageApp(refused())).get('/').set('Accept', 'text/html');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="almoner", error="invalid_token"');
    expect(res.text).toBe('<h1>Sign in again</h1><p>The token has expired.</p>');
  });

  it('sends Retry-After with the page of an outage, and never the message of an unexpected error', async () => {
    const outage = await request(pageApp(new DomainError('unavailable', 'down', { retryAfterSeconds: 7 })))
      .get('/')
      .set('Accept', 'text/html');
    expect(outage.status).toBe(503);
    expect(outage.headers['retry-after']).toBe('7');
    const crash = await request(pageApp(new Error('secret detail')))
      .get('/')
      .set('Accept', 'text/html');
    expect(crash.status).toBe(500);
    expect(crash.text).not.toContain('secret detail');
  });
});

describe('where error bodies are built', () => {
  const src = fileURLToPath(new URL('../../src', import.meta.url));
  const files = (fs.readdirSync(src, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'));

  it('builds problems, OAuth error bodies and problem+json only in src/http/ (docs/layout.md, "Errors")', () => {
    const builds = /new HttpProblem\(|ctx\.body = \{ error:|application\/problem\+json'/;
    const outside = files.filter((f) => !f.startsWith('http/') && f !== 'gateway/openapi.ts');
    expect(outside.filter((f) => builds.test(fs.readFileSync(path.join(src, f), 'utf8')))).toEqual([]);
  });
});
