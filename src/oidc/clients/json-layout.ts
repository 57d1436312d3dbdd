/**
 * Where things are in a JSON text: the line and column of each value and member name, the
 * members named twice in one object, and where the text stops being JSON. JSON.parse stays
 * the reader of the value; this only points problems at the place to fix
 * (docs/configuration.md, "The clients file").
 */

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in characters of the line. */
  column: number;
}

export type JsonPath = readonly (string | number)[];

interface Spot {
  /** Offset of the value. */
  value: number;
  /** Offset of the member's name, for an object member. */
  key?: number;
}

export interface JsonLayout {
  /** The value at `path` (or, with `key`, its member name); else the nearest enclosing value. */
  at(path: JsonPath, key?: boolean): TextPosition;
  /** Members named twice in one object: the path of the repeat and where its name is. */
  readonly repeats: readonly { path: JsonPath; position: TextPosition }[];
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: TextPosition,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** Converts offsets to lines and columns. */
function positions(text: string): (offset: number) => TextPosition {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - starts[low]! + 1 };
  };
}

function describeChar(ch: string | undefined): string {
  if (ch === undefined) return 'the end of the file';
  if (ch === '\n' || ch === '\r') return 'a line break';
  if (ch === '\uFEFF') return 'a byte order mark (save the file as UTF-8 without one)';
  if (ch < ' ') return 'a control character';
  return JSON.stringify(ch);
}

/**
 * Scans `text` as JSON (RFC 8259). Throws JsonSyntaxError at the first place it is not JSON,
 * naming what was expected there.
 */
export function scanJson(text: string): JsonLayout {
  const at = positions(text);
  const spots = new Map<string, Spot>();
  const repeats: { path: JsonPath; position: TextPosition }[] = [];
  let i = 0;

  const fail = (expected: string, offset = i): never => {
    throw new JsonSyntaxError(`expected ${expected}, found ${describeChar(text[offset])}`, at(offset));
  };
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };

  const string = (): string => {
    const start = i;
    i++; // the opening quote
    let out = '';
    for (;;) {
      const ch = text[i];
      if (ch === undefined) throw new JsonSyntaxError('a string is not closed (expected ")', at(start));
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch < ' ') fail('a closing " before the end of the line (control characters must be escaped)');
      if (ch === '\\') {
        const escape = text[i + 1];
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('four hex digits after \\u', i + 2);
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (escape === undefined || !(escape in simple)) fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u)', i + 1);
        out += simple[escape!] ?? '';
        i += 2;
        continue;
      }
      out += ch;
      i++;
    }
  };

  const number = () => {
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (!match) fail('a value');
    const end = i + match![0].length;
    // "01", "1." or "1e": the match stops early; what follows must end the number.
    if (end < text.length && /[0-9.eE+-]/.test(text[end]!)) fail('a well-formed number', end);
    i = end;
  };

  const value = (path: JsonPath, depth: number, key?: number) => {
    skipSpace();
    spots.set(JSON.stringify(path), { value: i, ...(key === undefined ? {} : { key }) });
    const ch = text[i];
    if (ch === '{') {
      if (depth >= MAX_DEPTH) fail(`at most ${MAX_DEPTH} levels of nesting`);
      i++;
      skipSpace();
      if (text[i] === '}') {
        i++;
        return;
      }
      const seen = new Set<string>();
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail('a member name in double quotes');
        const keyAt = i;
        const name = string();
        if (seen.has(name)) repeats.push({ path: [...path, name], position: at(keyAt) });
        seen.add(name);
        skipSpace();
        if (text[i] !== ':') fail('":" after the member name');
        i++;
        value([...path, name], depth + 1, keyAt);
        skipSpace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('"," or "}"');
      }
    }
    if (ch === '[') {
      if (depth >= MAX_DEPTH) fail(`at most ${MAX_DEPTH} levels of nesting`);
      i++;
      skipSpace();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let index = 0; ; index++) {
        value([...path, index], depth + 1);
        skipSpace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('"," or "]"');
      }
    }
    if (ch === '"') {
      string();
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
      number();
      return;
    }
    fail('a value');
  };

  value([], 0);
  skipSpace();
  if (i < text.length) fail('the end of the file after the value');

  return {
    at(path, key = false) {
      for (let length = path.length; length >= 0; length--) {
        const spot = spots.get(JSON.stringify(path.slice(0, length)));
        if (!spot) continue;
        return at(length === path.length && key && spot.key !== undefined ? spot.key : spot.value);
      }
      return at(0);
    },
    repeats,
  };
}

/** "line 3, column 14": how every positioned problem names its place. */
export function formatPosition(position: TextPosition): string {
  return `line ${position.line}, column ${position.column}`;
}
