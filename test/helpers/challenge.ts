/**
 * A strict parser of WWW-Authenticate (RFC 9110 11.6.1):
 *   challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *   auth-param = token BWS "=" BWS ( token / quoted-string )
 * Challenges are comma-separated; a parameter name appears once per challenge.
 */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
  token68?: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*(?=\s*(,|$))/;
const QUOTED = /^"((?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*)"/;

export function parseChallenges(header: string): Challenge[] {
  let rest = header;
  const challenges: Challenge[] = [];
  const fail = (why: string): never => {
    throw new Error(`malformed WWW-Authenticate (${why}) at ${JSON.stringify(rest)} in ${JSON.stringify(header)}`);
  };
  const skipSpace = () => {
    rest = rest.replace(/^[ \t]+/, '');
  };
  const take = (pattern: RegExp): RegExpExecArray | undefined => {
    const match = pattern.exec(rest);
    if (match) rest = rest.slice(match[0].length);
    return match ?? undefined;
  };

  skipSpace();
  while (rest.length > 0) {
    const scheme = take(TOKEN)?.[0] ?? fail('expected an auth-scheme');
    const challenge: Challenge = { scheme, params: {} };
    challenges.push(challenge);
    if (rest.length === 0) break;
    if (!/^[ \t]/.test(rest) && !rest.startsWith(',')) fail('expected a space after the scheme');
    skipSpace();
    // token68 form (e.g. Negotiate <base64>)
    const t68 =
      /^[A-Za-z0-9\-._~+/]+=*\s*(,|$)/.test(rest) && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*=\s*[^=]/.test(rest) ? take(TOKEN68) : undefined;
    if (t68) challenge.token68 = t68[0];
    else {
      // #auth-param, until the next challenge (a token not followed by "=") or the end
      for (;;) {
        skipSpace();
        const lookahead = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=/.exec(rest);
        if (!lookahead) break;
        rest = rest.slice(lookahead[0].length);
        skipSpace();
        const name = lookahead[1]!.toLowerCase();
        if (name in challenge.params) fail(`repeated parameter ${name}`);
        const quoted = take(QUOTED);
        const value = quoted ? quoted[1]!.replace(/\\(.)/g, '$1') : (take(TOKEN)?.[0] ?? fail(`expected a value for ${name}`));
        challenge.params[name] = value;
        skipSpace();
        if (!rest.startsWith(',')) break;
        rest = rest.slice(1);
        skipSpace();
      }
    }
    skipSpace();
    if (rest.startsWith(',')) {
      rest = rest.slice(1);
      skipSpace();
    } else if (rest.length > 0 && !TOKEN.test(rest)) fail('unexpected characters');
  }
  if (challenges.length === 0) fail('empty');
  return challenges;
}
