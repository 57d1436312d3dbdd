import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressSet, callerInside, clientAddress, normaliseIp, parseHop, resolveForwarded } from '../../src/http/client-address.js';

/** A real HTTP server that echoes what clientAddress decided, reached over loopback. */
async function echoServer(trusted: string[], host: '127.0.0.1' | '::1' = '127.0.0.1') {
  const app = new Koa();
  app.use(clientAddress(new AddressSet(trusted)));
  app.use((ctx) => {
    ctx.body = { ip: ctx.state.clientIp, known: ctx.state.clientIpKnown, protocol: ctx.state.protocol };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return host === '::1' ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('caller address', () => {
  it('is the socket peer when the peer is not a trusted proxy, whatever X-Forwarded-For says', async () => {
    const url = await echoServer(['10.0.0.0/8']);
    const res = await request(url).get('/').set('X-Forwarded-For', '203.0.113.9').set('X-Forwarded-Proto', 'https');
    expect(res.body).toEqual({ ip: '127.0.0.1', known: true, protocol: 'http' });
  });

  it('is taken from X-Forwarded-For when the peer is a trusted proxy, skipping our own proxies from the right', async () => {
    const url = await echoServer(['127.0.0.1/32', '10.0.0.0/8']);
    const res = await request(url).get('/').set('X-Forwarded-For', '198.51.100.7, 203.0.113.9, 10.1.2.3').set('X-Forwarded-Proto', 'https');
    // 198.51.100.7 was supplied by the client itself and cannot be trusted; 203.0.113.9 reached our proxy.
    expect(res.body).toEqual({ ip: '203.0.113.9', known: true, protocol: 'https' });
  });

  it('is the trusted peer itself when it sends no X-Forwarded-For', async () => {
    const url = await echoServer(['127.0.0.1']);
    expect((await request(url).get('/')).body).toEqual({ ip: '127.0.0.1', known: true, protocol: 'http' });
  });

  it('is unknown when a trusted proxy forwards an unreadable hop, keeping the nearest trusted hop for throttling', async () => {
    const url = await echoServer(['127.0.0.1']);
    expect((await request(url).get('/').set('X-Forwarded-For', '203.0.113.9, garbage')).body).toEqual({
      ip: '127.0.0.1',
      known: false,
      protocol: 'http',
    });
  });

  it('trusts IPv6 proxies by range', async () => {
    let url: string;
    try {
      url = await echoServer(['::1/128'], '::1');
    } catch {
      throw new Error('IPv6 loopback unavailable on this machine');
    }
    const res = await request(url).get('/').set('X-Forwarded-For', '2001:db8::42');
    expect(res.body).toEqual({ ip: '2001:db8::42', known: true, protocol: 'http' });
  });
});

describe('X-Forwarded-For hops', () => {
  it('parses IPv4, IPv6, IPv4:port and [IPv6]:port, and nothing else', () => {
    expect(parseHop(' 203.0.113.9 ')).toBe('203.0.113.9');
    expect(parseHop('203.0.113.9:5555')).toBe('203.0.113.9');
    expect(parseHop('2001:db8::1')).toBe('2001:db8::1');
    expect(parseHop('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(parseHop('::ffff:192.0.2.5')).toBe('192.0.2.5');
    expect(parseHop('[::ffff:192.0.2.5]:80')).toBe('192.0.2.5');
    for (const bad of [
      '',
      'unknown',
      'garbage',
      '_hidden',
      '[2001:db8::1]',
      '2001:db8::1:443x',
      '203.0.113.9:',
      '203.0.113.9:65536',
      '[2001:db8::1]:99999',
      'fe80::1%eth0',
      '"203.0.113.9"',
      '203.0.113.009',
      '203.0.113',
      'for=203.0.113.9',
      '203.0.113.9 198.51.100.1',
    ]) {
      expect(parseHop(bad), bad).toBeUndefined();
    }
  });

  it('walks right to left through trusted hops and stops at the first untrusted or unreadable one', () => {
    const trusted = new AddressSet(['10.0.0.0/8', '127.0.0.1']);
    expect(resolveForwarded('127.0.0.1', ['198.51.100.7, 203.0.113.9, 10.1.2.3'], trusted)).toEqual({ ip: '203.0.113.9', known: true });
    expect(resolveForwarded('127.0.0.1', ['198.51.100.7, 203.0.113.9:5555'], trusted)).toEqual({ ip: '203.0.113.9', known: true });
    expect(resolveForwarded('127.0.0.1', ['198.51.100.7, unknown, 10.1.2.3'], trusted)).toEqual({ ip: '10.1.2.3', known: false });
    expect(resolveForwarded('127.0.0.1', ['198.51.100.7,'], trusted)).toEqual({ ip: '127.0.0.1', known: false });
    // Header lines are one list, in order.
    expect(resolveForwarded('127.0.0.1', ['198.51.100.7', '203.0.113.9, 10.1.2.3'], trusted)).toEqual({ ip: '203.0.113.9', known: true });
    // All hops ours: the request began at the left-most.
    expect(resolveForwarded('127.0.0.1', ['10.9.9.9, 10.1.2.3'], trusted)).toEqual({ ip: '10.9.9.9', known: true });
    expect(resolveForwarded('127.0.0.1', [], trusted)).toEqual({ ip: '127.0.0.1', known: true });
  });

  it('never puts an unknown caller inside an address set', () => {
    const loopback = new AddressSet(['127.0.0.0/8']);
    expect(callerInside(loopback, { clientIp: '127.0.0.1', clientIpKnown: true })).toBe(true);
    expect(callerInside(loopback, { clientIp: '127.0.0.1', clientIpKnown: false })).toBe(false);
    expect(callerInside(loopback, { clientIp: '127.0.0.1' })).toBe(false);
  });
});

describe('AddressSet', () => {
  it('matches IPv4 and IPv6 ranges and single addresses, and IPv4-mapped IPv6 peers', () => {
    const set = new AddressSet(['192.0.2.0/24', '2001:db8:abcd::/48', '198.51.100.10']);
    expect(set.has('192.0.2.200')).toBe(true);
    expect(set.has('192.0.3.1')).toBe(false);
    expect(set.has('::ffff:192.0.2.5')).toBe(true);
    expect(set.has('2001:db8:abcd:12::1')).toBe(true);
    expect(set.has('2001:db8:abce::1')).toBe(false);
    expect(set.has('198.51.100.10')).toBe(true);
    expect(set.has('198.51.100.11')).toBe(false);
    expect(set.has('not an ip')).toBe(false);
  });

  it('normalises IPv4-mapped addresses', () => {
    expect(normaliseIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normaliseIp('::1')).toBe('::1');
  });
});
