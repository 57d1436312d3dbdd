import { expect } from 'vitest';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
const VALUE = '(?:[-+]?(?:\\d+\\.?\\d*(?:e[-+]?\\d+)?|\\.\\d+)|[Nn][Aa][Nn]|[-+]Inf)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/**
 * Parses the Prometheus text format (version 0.0.4) strictly (NaN in any case, as Prometheus
 * reads it: prom-client writes "Nan"): every line must be a HELP, a
 * TYPE or a sample, every sample must belong to a declared metric family, and no series may
 * repeat. Returns the samples and the declared types.
 */
export function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (HELP.test(line)) continue;
    const type = TYPE.exec(line);
    if (type) {
      expect(types.has(type[1]!), `TYPE declared twice for ${type[1]}`).toBe(false);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const match = SAMPLE.exec(line);
    expect(match, `not a valid exposition line: ${line}`).not.toBeNull();
    const [, name, labelText, value] = match!;
    const family = name!.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(name!) || types.has(family), `sample ${name} has no TYPE`).toBe(true);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g)) {
      labels[key!] = raw!.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    expect(seen.has(key), `series repeated: ${line}`).toBe(false);
    seen.add(key);
    samples.push({ name: name!, labels, value: Number(value!.replace(/^\+/, '')) });
  }
  return { samples, types };
}

/** The sum of the samples with this name whose labels include these (undefined when none does). */
export function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}
