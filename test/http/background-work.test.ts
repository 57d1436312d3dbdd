import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BackgroundWork } from '../../src/http/background-work.js';
import { captureLogs } from '../helpers/log-capture.js';

/** The background work unit (src/http/background-work.ts) over a real HTTP server: after the response, never before; drained; failures logged by name. */
describe('BackgroundWork', () => {
  it('starts a task only once the response is sent, and drain waits for it; a failure is logged by name with its message only', async () => {
    const { logger, records } = captureLogs('warn');
    const work = new BackgroundWork(logger);
    const order: string[] = [];
    const server = http.createServer((req, res) => {
      work.afterResponse(res, 'test-task', async () => {
        order.push(`task sees finished=${res.writableFinished}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        order.push('task done');
      });
      work.afterResponse(res, 'failing-task', async () => {
        throw new Error('mail server said no');
      });
      order.push('handler returned');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(await response.text()).toBe('ok');
      await work.drain();
      expect(order).toEqual(['handler returned', 'task sees finished=true', 'task done']);
      expect(work.size).toBe(0);
      expect(records()).toEqual([
        expect.objectContaining({
          msg: 'background task failed',
          task: 'failing-task',
          error: { name: 'Error', message: 'mail server said no' },
        }),
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('runs a task at once with run(), and drain also waits for tasks started by tasks', async () => {
    const work = new BackgroundWork();
    const done: string[] = [];
    work.run('outer', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      work.run('inner', async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        done.push('inner');
      });
      done.push('outer');
    });
    await work.drain();
    expect(done).toEqual(['outer', 'inner']);
  });
});
