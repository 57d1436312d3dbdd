import { describe, expect, it } from 'vitest';
import { bindAddressOf, listenAddresses } from '../../src/server/listeners.js';

/**
 * Which addresses the four public URLs are served on. The spawned-server tests all use port 0
 * now, so this is where `npm start`'s fixed ports (3000-3003 in dev) are checked.
 */

const urls = (base_url: string, sandbox_base_url: string, dashboard_url: string, sandbox_dashboard_url: string) => ({ base_url, sandbox_base_url, dashboard_url, sandbox_dashboard_url });

describe('listen addresses', () => {
  it("follow from the four URLs: the dev defaults are four loopback ports", () => {
    expect(listenAddresses(urls('http://127.0.0.1:3000', 'http://127.0.0.1:3001', 'http://127.0.0.1:3002', 'http://127.0.0.1:3003'))).toEqual([
      { host: '127.0.0.1', port: 3000 },
      { host: '127.0.0.1', port: 3001 },
      { host: '127.0.0.1', port: 3002 },
      { host: '127.0.0.1', port: 3003 },
    ]);
  });

  it('bind a DNS name on all interfaces, default ports by scheme, one listener per shared port', () => {
    expect(listenAddresses(urls('https://api.example.org', 'https://api.sandbox.example.org', 'https://dashboard.example.org', 'http://[::1]:8080'))).toEqual([
      { host: '0.0.0.0', port: 443 },
      { host: '::1', port: 8080 },
    ]);
    expect(bindAddressOf('http://localhost:0')).toEqual({ host: 'localhost', port: 0 });
  });

  it('are those of listen when it is set', () => {
    expect(listenAddresses({ ...urls('https://a.example', 'https://b.example', 'https://c.example', 'https://d.example'), listen: ['0.0.0.0:8080', '[::]:8443'] })).toEqual([
      { host: '0.0.0.0', port: 8080 },
      { host: '::', port: 8443 },
    ]);
  });
});
