#!/usr/bin/env node
// Fails when a tracked file names a path above the repository root: a user's clone has
// nothing beside it, so such a path works on our machines and breaks on theirs.
//
// What it finds, in every tracked text file:
//   - the product specification's `shared` folder beside our checkout, named by a relative
//     path or by path.join steps, anywhere;
//   - a relative path (one or more `..` steps) that, resolved from the file's own folder,
//     leaves the repository (Markdown links, imports, shell paths);
//   - in code, path.join/resolve from the file's own folder (import.meta.url, __dirname)
//     with more `'..'` steps than the file is deep, or from a root constant
//     (PROJECT_ROOT, ROOT, REPO_ROOT) with any `'..'` step.
// Paths built at run time are beyond a text scan: .ci/run also runs the whole check in a
// copy of the tree with nothing beside it, which catches those.
//
// Usage: node scripts/check-self-contained.mjs   (from anywhere inside the repository)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

// Generated or recorded data, not paths anyone follows.
const IGNORED = [/^package-lock\.json$/, /^bench\/results\//];
const CODE = /\.(?:[cm]?[jt]s|sh)$|^\.ci\//;

const RELATIVE = /(?<![\w./-])((?:\.\.\/)+)([\w.@-][^\s'"`)\]>,;]*)?/g;
const FROM_OWN_DIR =
  /path\.(?:join|resolve)\(\s*(?:path\.dirname\(\s*fileURLToPath\(\s*import\.meta\.url\s*\)\s*\)|__dirname|import\.meta\.dirname)\s*((?:,\s*['"]\.\.['"]\s*)+)/g;
const FROM_ROOT = /path\.(?:join|resolve)\(\s*(?:PROJECT_ROOT|ROOT|REPO_ROOT)\s*,\s*['"]\.\.['"]/g;

/** @param {Buffer} buffer */
function isText(buffer) {
  return !buffer.subarray(0, 8000).includes(0);
}

/** @type {string[]} */
const findings = [];
for (const file of files) {
  if (IGNORED.some((pattern) => pattern.test(file))) continue;
  const full = path.join(root, file);
  let buffer;
  try {
    buffer = fs.readFileSync(full);
  } catch {
    continue; // listed but absent (a deletion not yet committed)
  }
  if (!isText(buffer)) continue;
  const depth = path.posix.dirname(file) === '.' ? 0 : path.posix.dirname(file).split('/').length;
  const lines = buffer.toString('utf8').split('\n');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    if (/\.\.[\\/]shared\b|['"]\.\.['"]\s*,\s*['"]shared['"]/.test(line)) {
      findings.push(`${where}: names the shared folder beside our checkout`);
      return;
    }
    for (const match of line.matchAll(RELATIVE)) {
      const ups = (match[1] ?? '').length / 3;
      if (ups > depth) findings.push(`${where}: ${match[0]} leaves the repository (${ups} levels up from a file ${depth} deep)`);
    }
    if (!CODE.test(file)) return;
    for (const match of line.matchAll(FROM_OWN_DIR)) {
      const ups = ((match[1] ?? '').match(/\.\./g) ?? []).length;
      if (ups > depth) findings.push(`${where}: ${ups} '..' steps from a file ${depth} deep leave the repository`);
    }
    for (const match of line.matchAll(FROM_ROOT)) findings.push(`${where}: ${match[0]} goes above the repository root`);
  });
}

if (findings.length > 0) {
  console.error(
    `Tracked files name paths outside the repository (a clone has nothing beside it):\n${findings.map((f) => `  ${f}`).join('\n')}`,
  );
  process.exit(1);
}
console.log(`self-contained: ${files.length} tracked files name no path above the repository root`);
