import { parseTree, visit, type Node } from 'jsonc-parser';

/**
 * Where things are in a JSON text: the line and column of each value and member name, the
 * members named twice in one object, and where the text stops being JSON. JSON.parse stays
 * the reader of the value; jsonc-parser (strict: no comments, no trailing commas) finds the
 * places, and this only words them (docs/configuration.md, "The clients file").
 */

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in characters of the line. */
  column: number;
}

export type JsonPath = readonly (string | number)[];

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
const LITERAL = /true|false|null/y;

/** Converts offsets to lines and columns (lines end at "\n" only, as editors count them). */
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

/** What is wrong inside the string starting at `start` (its opening quote), and where. */
function stringProblem(text: string, start: number): { expected: string; offset: number } | { unclosed: true } | undefined {
  for (let i = start + 1; ; i++) {
    const ch = text[i];
    if (ch === undefined) return { unclosed: true };
    if (ch === '"') return undefined;
    if (ch < ' ') return { expected: 'a closing " before the end of the line (control characters must be escaped)', offset: i };
    if (ch !== '\\') continue;
    const escape = text[i + 1];
    if (escape === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return { expected: 'four hex digits after \\u', offset: i + 2 };
      i += 5;
    } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) i++;
    else return { expected: 'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u)', offset: i + 1 };
  }
}

/**
 * Checks `text` is JSON (RFC 8259). Throws JsonSyntaxError at the first place it is not,
 * naming what was expected there.
 */
function checkSyntax(text: string, at: (offset: number) => TextPosition): void {
  // What the parser expects next: a member name, the colon after one, a value, or what
  // follows a value in its container ("," or the closer; the end of the file at the top).
  let expecting: 'name' | 'colon' | 'value' | 'after' = 'value';
  const containers: ('object' | 'array')[] = [];
  let numberEnd = -1;

  const fail = (expected: string, offset: number): never => {
    throw new JsonSyntaxError(`expected ${expected}, found ${describeChar(text[offset])}`, at(offset));
  };
  const afterValue = (offset: number): never => {
    const container = containers.at(-1);
    return fail(
      container === 'object' ? '"," or "}"' : container === 'array' ? '"," or "]"' : 'the end of the file after the value',
      offset,
    );
  };
  const string = (offset: number) => {
    const problem = stringProblem(text, offset);
    if (problem && 'unclosed' in problem) throw new JsonSyntaxError('a string is not closed (expected ")', at(offset));
    if (problem) fail(problem.expected, problem.offset);
  };
  const begin = (kind: 'object' | 'array') => (offset: number) => {
    if (containers.length >= MAX_DEPTH) fail(`at most ${MAX_DEPTH} levels of nesting`, offset);
    containers.push(kind);
    expecting = kind === 'object' ? 'name' : 'value';
  };
  const end = (offset: number) => {
    // jsonc-parser reports an unclosed container's end before its error; the error words it.
    if (text[offset] !== '}' && text[offset] !== ']') return;
    containers.pop();
    expecting = 'after';
  };

  visit(
    text,
    {
      onObjectBegin: begin('object'),
      onArrayBegin: begin('array'),
      onObjectEnd: end,
      onArrayEnd: end,
      onObjectProperty: () => {
        expecting = 'colon';
      },
      onSeparator: (separator) => {
        expecting = separator === ':' || containers.at(-1) === 'array' ? 'value' : 'name';
      },
      onLiteralValue: (value, offset, length) => {
        expecting = 'after';
        numberEnd = typeof value === 'number' ? offset + length : -1;
      },
      onError: (_code, offset) => {
        const ch = text[offset];
        if (expecting === 'colon') fail('":" after the member name', offset);
        if (expecting === 'after') {
          // "01", "1-2": the number ended early, and what follows cannot end it.
          if (offset === numberEnd && /[0-9.eE+-]/.test(ch ?? '')) fail('a well-formed number', offset);
          afterValue(offset);
        }
        if (ch === '"') string(offset);
        if (expecting === 'name') fail('a member name in double quotes', offset);
        if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
          NUMBER.lastIndex = offset;
          const match = NUMBER.exec(text);
          if (!match) fail('a value', offset);
          fail('a well-formed number', offset + match![0].length);
        }
        // "truex": the literal is whole; what follows it is the problem.
        LITERAL.lastIndex = offset;
        const literal = LITERAL.exec(text);
        if (literal) afterValue(offset + literal[0].length);
        fail('a value', offset);
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
}

/** The last member named `name` (JSON.parse keeps the last). */
function member(object: Node, name: string): Node | undefined {
  return object.children?.findLast((property) => property.children?.[0]?.value === name && property.children.length === 2);
}

/**
 * Reads `text` as JSON (RFC 8259): throws JsonSyntaxError at the first place it is not,
 * else returns where each part of it is.
 */
export function scanJson(text: string): JsonLayout {
  const at = positions(text);
  checkSyntax(text, at);
  const root = parseTree(text, [], { disallowComments: true })!;

  const repeats: { path: JsonPath; position: TextPosition }[] = [];
  const findRepeats = (node: Node, path: JsonPath) => {
    if (node.type === 'array') node.children?.forEach((child, index) => findRepeats(child, [...path, index]));
    if (node.type !== 'object') return;
    const seen = new Set<string>();
    for (const [key, value] of (node.children ?? []).map((property) => property.children ?? [])) {
      const name = key!.value as string;
      if (seen.has(name)) repeats.push({ path: [...path, name], position: at(key!.offset) });
      seen.add(name);
      if (value) findRepeats(value, [...path, name]);
    }
  };
  findRepeats(root, []);

  return {
    at(path, key = false) {
      let node = root;
      for (const segment of path) {
        const next =
          typeof segment === 'string'
            ? node.type === 'object'
              ? member(node, segment)?.children?.[1]
              : undefined
            : node.type === 'array'
              ? node.children?.[segment]
              : undefined;
        if (!next) return at(node.offset);
        node = next;
      }
      return at(key && node.parent?.type === 'property' ? node.parent.children![0]!.offset : node.offset);
    },
    repeats,
  };
}

/** "line 3, column 14": how every positioned problem names its place. */
export function formatPosition(position: TextPosition): string {
  return `line ${position.line}, column ${position.column}`;
}
