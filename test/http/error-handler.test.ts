import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { HttpProblem } from '../../src/http/problem.js';
import { appThrowing } from '../helpers/throwing-app.js';

describe('error middleware', () => {
  it('renders an HttpProblem as RFC 9457 problem+json with its headers', async () => {
    const res = await request(
      appThrowing(new HttpProblem(409, 'Conflict', 'already exists', { headers: { 'X-Thing': '1' }, extensions: { code: 'dup' } })),
    ).get('/');
    expect(res.status).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-thing']).toBe('1');
    expect(res.body).toEqual({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'already exists', code: 'dup' });
  });

  it('turns an unexpected error into a 500 that reveals nothing of it', async () => {
    const res = await request(appThrowing(new Error('password=hunter2 leaked in a message'))).get('/');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(res.body.title).toBe('Internal Server Error');
  });

  it('turns a lost database connection into a retryable 503', async () => {
    const res = await request(appThrowing(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).get(
      '/',
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
  });

  it('keeps the status of client errors raised by Koa, and their message only when exposable', async () => {
    const exposed = await request(appThrowing(Object.assign(new Error('body too large'), { status: 413, expose: true }))).get('/');
    expect(exposed.body).toEqual({
      type: 'about:blank',
      title: 'Content Too Large',
      status: 413,
      detail: 'body too large',
      code: 'too_large',
    });
    const hidden = await request(appThrowing(Object.assign(new Error('internal detail'), { status: 400, expose: false }))).get('/');
    expect(hidden.body).toEqual({ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'Bad Request.', code: 'invalid' });
  });
});
