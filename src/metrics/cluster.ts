import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * /metrics with several server processes (workers > 1): whichever worker the scrape reaches
 * asks the primary, which collects every worker's registry over the cluster's IPC channel
 * (prom-client's AggregatorRegistry) and answers with their sum: counters and histograms add
 * up, gauges add up unless they say otherwise (a gauge read from the database, the same in
 * every worker, takes the largest; process metrics follow prom-client's own rules).
 */

const SCRAPE_REQUEST = 'almoner:metrics-scrape';
const SCRAPE_RESPONSE = 'almoner:metrics-scraped';

/** A worker's scrape fails when the primary has not answered within this (prom-client gives each worker 5 s). */
export const CLUSTER_SCRAPE_TIMEOUT_MS = 10_000;

interface ScrapeRequest {
  type: typeof SCRAPE_REQUEST;
  id: number;
}

interface ScrapeResponse {
  type: typeof SCRAPE_RESPONSE;
  id: number;
  text?: string;
  error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** In the primary: answers each worker's scrape request with the aggregate over all workers. */
export function serveClusterScrapes(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<ScrapeRequest>(message, SCRAPE_REQUEST)) return;
    const reply = (response: Omit<ScrapeResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: SCRAPE_RESPONSE, id: message.id, ...response } satisfies ScrapeResponse);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}

/**
 * In a worker: offers `registry` to the primary's aggregation, and returns the scrape that
 * asks the primary for the aggregate (this worker's own registry included).
 */
export function clusterScrape(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs this worker's answer to the primary's collection requests
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (!isMessage<ScrapeResponse>(message, SCRAPE_RESPONSE)) return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.text !== undefined) waiting.resolve(message.text);
    else waiting.reject(new Error(`cluster metrics: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      if (!process.send || !process.connected) {
        reject(new Error('cluster metrics: not connected to the primary'));
        return;
      }
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer in time'));
      }, CLUSTER_SCRAPE_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send({ type: SCRAPE_REQUEST, id } satisfies ScrapeRequest);
    });
}
