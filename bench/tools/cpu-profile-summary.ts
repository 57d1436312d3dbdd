/**
 * Summarises a `.cpuprofile` (BENCH_CPU_PROF) by where the main thread's time went: self time
 * per package, Node module or folder of Almoner's, per request over a window of the profile
 * (docs/benchmarks.md, "The token endpoint beside the durable peer"). Without a window it prints
 * how busy each second was, to find the measured run in it.
 *
 *   npx tsx bench/tools/cpu-profile-summary.ts <file> [fromSecond toSecond requests] [functions]
 */
import fs from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A frame's place: a package, a Node module, a folder of dist/ or src/, or the engine's own (GC, program). */
export function placeOf({ url, functionName }: CallFrame): string {
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const inPackage = url.split('node_modules/').at(-1)!;
  if (inPackage !== url) return `package ${/^((?:@[^/]+\/)?[^/]+)/.exec(inPackage)![1]}`;
  if (url.startsWith('node:')) return url;
  const own = /\/(dist|src|bench)\/(.*)$/.exec(url);
  return own ? `${own[1]}/${own[2]!.split('/').slice(0, -1).join('/') || own[2]}` : url;
}

export function selfTimes(profile: Profile, fromUs: number, toUs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  const busyBySecond = new Map<number, number>();
  let at = profile.startTime;
  const times = profile.timeDeltas.map((d) => (at += d));
  let busy = 0;
  for (let i = 0; i + 1 < profile.samples.length; i += 1) {
    const frame = byId.get(profile.samples[i]!)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const took = times[i + 1]! - times[i]!;
    const second = Math.floor((times[i]! - profile.startTime) / 1e6);
    busyBySecond.set(second, (busyBySecond.get(second) ?? 0) + took);
    const offset = times[i]! - profile.startTime;
    if (offset < fromUs || offset > toUs) continue;
    busy += took;
    const place = placeOf(frame);
    places.set(place, (places.get(place) ?? 0) + took);
    const name = `${place} ${frame.functionName}:${frame.lineNumber}`;
    functions.set(name, (functions.get(name) ?? 0) + took);
  }
  return { busy, places, functions, busyBySecond };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, from, to, requests = '1', top = '0'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/tools/cpu-profile-summary.ts <file> [fromSecond toSecond requests] [functions]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  if (from === undefined || to === undefined) {
    const { busyBySecond } = selfTimes(profile, 0, 0);
    console.log([...busyBySecond].map(([second, us]) => `${second}s ${Math.round(us / 1e4)}%`).join('  '));
  } else {
    const n = Number(requests);
    const { busy, places, functions } = selfTimes(profile, Number(from) * 1e6, Number(to) * 1e6);
    const rows = (map: Map<string, number>, count: number) =>
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([name, us]) => `${(us / n).toFixed(1).padStart(9)} µs  ${name}`)
        .join('\n');
    console.log(`busy ${(busy / 1e3).toFixed(0)} ms in the window, ${(busy / n).toFixed(1)} µs per request\n${rows(places, 40)}`);
    if (Number(top) > 0) console.log(`\n${rows(functions, Number(top))}`);
  }
}
