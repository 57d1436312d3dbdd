/**
 * Summarises a `--trace-gc-nvp` log (a server's output under BENCH_CHILD_LOG with
 * BENCH_NODE_ARGS=--trace-gc-nvp): scavenges and full collections after `fromMs` (milliseconds
 * since the process started, as V8 prints them), and per scavenge what was allocated, copied and
 * promoted (docs/benchmarks.md, "The token endpoint beside the durable peer").
 *
 *   npx tsx bench/tools/gc-trace-summary.ts <log> [fromMs] [toMs]
 */
import fs from 'node:fs';

type Event = Record<string, string> & { at: number };

const LINE = /^\[\d+:0x[0-9a-f]+(?::\d+)?\]\s+(\d+) ms: (.*)$/;

export function gcEvents(text: string): Event[] {
  const events: Event[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const fields = Object.fromEntries(
      match[2]!
        .split(' ')
        .map((pair) => pair.split('='))
        .filter((pair) => pair.length === 2),
    );
    events.push({ ...fields, at: Number(match[1]) });
  }
  return events;
}

const sum = (events: Event[], key: string) => events.reduce((total, e) => total + Number(e[key] ?? 0), 0);
const per = (events: Event[], key: string, scale = 1) => (events.length === 0 ? 0 : sum(events, key) / events.length / scale);
const MB = 1e6;

export function summarise(events: Event[]) {
  const scavenges = events.filter((e) => e.gc === 's');
  const full = events.filter((e) => e.gc === 'mc' || e.gc === 'ms');
  const span = events.length > 1 ? events.at(-1)!.at - events[0]!.at : 0;
  return {
    span_ms: span,
    scavenges: scavenges.length,
    full_collections: full.length,
    ms_between_scavenges: scavenges.length > 0 ? Math.round(span / scavenges.length) : null,
    per_scavenge: {
      allocated_mb: per(scavenges, 'allocated', MB),
      copied_mb: per(scavenges, 'new_space_survived', MB),
      promoted_mb: per(scavenges, 'promoted', MB),
      pause_ms: per(scavenges, 'pause'),
      background_ms: per(scavenges, 'background.scavenge.parallel'),
    },
    new_space_capacity_mb: scavenges.length > 0 ? Number(scavenges.at(-1)!.new_space_capacity ?? 0) / MB : null,
    per_full_collection: {
      pause_ms: per(full, 'pause'),
      background_mark_ms: per(full, 'background.mark'),
      before_after_mb: full.map((e) => [Number(e.start_object_size) / MB, Number(e.end_object_size) / MB]),
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, from = '0', to = 'Infinity'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/tools/gc-trace-summary.ts <log> [fromMs] [toMs]');
    process.exit(2);
  }
  const events = gcEvents(fs.readFileSync(file, 'utf8')).filter((e) => e.at >= Number(from) && e.at <= Number(to));
  console.log(JSON.stringify(summarise(events), null, 2));
}
