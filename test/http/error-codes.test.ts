import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { codeOfStatus, ERROR_CODES, ERROR_CODE_NAMES, isErrorCode, statusOfCode, type ErrorCode } from '../../src/errors/codes.js';
import { DomainError, rateLimited } from '../../src/errors/domain-error.js';
import { mapUniqueViolation } from '../../src/errors/unique-violation.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { HttpProblem, titleFor } from '../../src/http/problem.js';
import { appThrowing } from '../helpers/throwing-app.js';

/** The vocabulary as the API documentation states it: code and HTTP status. */
const VOCABULARY: [ErrorCode, number][] = [
  ['invalid', 400],
  ['unauthenticated', 401],
  ['forbidden', 403],
  ['not_found', 404],
  ['method_not_allowed', 405],
  ['not_acceptable', 406],
  ['conflict', 409],
  ['gone', 410],
  ['precondition', 412],
  ['too_large', 413],
  ['unsupported_media_type', 415],
  ['misdirected', 421],
  ['unprocessable', 422],
  ['rate_limited', 429],
  ['internal', 500],
  ['not_implemented', 501],
  ['unavailable', 503],
];

describe('the error vocabulary', () => {
  it('is exactly the documented codes', () => {
    expect(ERROR_CODES).toEqual(Object.fromEntries(VOCABULARY));
    expect(ERROR_CODE_NAMES).toEqual(VOCABULARY.map(([code]) => code));
  });

  it.each(VOCABULARY)('%s is %i and back', (code, status) => {
    expect(isErrorCode(code)).toBe(true);
    expect(statusOfCode(code)).toBe(status);
    expect(codeOfStatus(status)).toBe(code);
    // A problem built from the status carries the code by default.
    expect(new HttpProblem(status, titleFor(status)).toJSON()).toMatchObject({ status, code });
  });

  it('gives statuses outside the table invalid (4xx) or internal (5xx)', () => {
    expect(codeOfStatus(418)).toBe('invalid');
    expect(codeOfStatus(502)).toBe('internal');
    expect(isErrorCode('teapot')).toBe(false);
  });

  it('lets a problem leave the code out, or carry its own', () => {
    expect(new HttpProblem(403, 'Forbidden', 'outside', { code: null }).toJSON()).toEqual({
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: 'outside',
    });
    expect(new HttpProblem(404, 'Not Found', 'x', { code: null, extensions: { code: 701 } }).toJSON().code).toBe(701);
  });
});

describe('domain errors over HTTP', () => {
  it.each(VOCABULARY)('a DomainError %s becomes a %i problem with that code and its message', async (code, status) => {
    const res = await request(appThrowing(new DomainError(code, 'what went wrong'))).get('/');
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({ type: 'about:blank', title: titleFor(status), status, detail: 'what went wrong', code });
  });

  it('sends retryAfterSeconds as Retry-After', async () => {
    const res = await request(appThrowing(rateLimited('slow down', 42))).get('/');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('42');
    expect(res.body).toMatchObject({ code: 'rate_limited', detail: 'slow down' });
  });

  it('gives the problems it makes itself their code (404 of an unknown route, 500, 503)', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler());
    expect((await request(app.callback()).get('/nothing')).body).toMatchObject({ status: 404, code: 'not_found' });
    expect((await request(appThrowing(new Error('boom'))).get('/')).body).toMatchObject({ status: 500, code: 'internal' });
    expect((await request(appThrowing(Object.assign(new Error('down'), { code: 'ECONNREFUSED' }))).get('/')).body).toMatchObject({
      status: 503,
      code: 'unavailable',
    });
  });
});

describe('the unique-violation mapper', () => {
  const violation = (constraint: string) =>
    Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505', constraint });

  it('maps a named constraint to a conflict', () => {
    let thrown: unknown;
    try {
      mapUniqueViolation(violation('users_email_key'), { users_email_key: 'a user with email x already exists' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(thrown).toMatchObject({ code: 'conflict', message: 'a user with email x already exists' });
  });

  it('rethrows any other error as it is', () => {
    const other = violation('users_pkey');
    expect(() => mapUniqueViolation(other, { users_email_key: 'x' })).toThrow(other);
    const notUnique = Object.assign(new Error('fk'), { code: '23503', constraint: 'users_email_key' });
    expect(() => mapUniqueViolation(notUnique, { users_email_key: 'x' })).toThrow(notUnique);
    expect(() => mapUniqueViolation(violation('toString'), {})).toThrow(Error);
  });
});

describe('where errors are made', () => {
  const src = fileURLToPath(new URL('../../src', import.meta.url));
  const files = (fs.readdirSync(src, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'));
  const read = (file: string) => fs.readFileSync(path.join(src, file), 'utf8');

  it('checks for a unique violation (23505) only in the mapper', () => {
    expect(files.filter((f) => read(f).includes('23505'))).toEqual(['errors/unique-violation.ts']);
  });

  it('keeps HttpProblem out of services and repositories: they throw domain errors', () => {
    const nonHttp = files.filter((f) => /(^|[/-])(service|repository)\.ts$/.test(f) || f.startsWith('errors/'));
    expect(nonHttp.length).toBeGreaterThan(5);
    expect(nonHttp.filter((f) => /\bHttpProblem\b|http\/problem\.js|gateway\/problems\.js|\.\.\/problems\.js/.test(read(f)))).toEqual([]);
  });
});
