import type { Logger } from '../logging/logger.js';
import type { HostTarget } from './hosts.js';

/** What the shared middleware puts on ctx.state for everything after it. */
export interface RequestState {
  requestId: string;
  /**
   * Caller address: the socket peer, or X-Forwarded-For when the peer is a trusted proxy.
   * When a trusted proxy forwarded a hop we cannot read, this is the nearest trusted hop
   * (throttles and logs key on it) and clientIpKnown is false.
   */
  clientIp: string;
  /** False when the caller's address is unknown: never admit by clientIp then (callerInside). */
  clientIpKnown: boolean;
  /** 'https' when TLS ended in this process or at a trusted proxy that said so. */
  protocol: 'http' | 'https';
  log: Logger;
  /** Which of the four public hosts the request addressed; set by the host dispatcher. */
  host: HostTarget['key'];
  /** The public origin of that host (configured, not read from the request): a DPoP proof's htu is judged against it. */
  publicOrigin: string;
}

declare module 'koa' {
  // Declaration merging needs an interface; it adds RequestState to Koa's ctx.state type.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface DefaultState extends Partial<RequestState> {}
}
