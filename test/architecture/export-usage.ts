import path from 'node:path';
import ts from 'typescript';

/**
 * Exports under src/ that no other file imports: the ts-prune-style check, built on the
 * compiler's own symbol resolution so re-exports, type-only imports and aliases all count.
 */
export interface UnusedExport {
  file: string;
  name: string;
  usedInFile: boolean;
}

export function findUnusedExports(root: string): UnusedExport[] {
  const configPath = path.join(root, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true } });
  const checker = program.getTypeChecker();
  const sourceFiles = program.getSourceFiles().filter((f) => !f.isDeclarationFile && !f.fileName.includes('/node_modules/'));

  const original = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const used = new Set<ts.Symbol>();
  const wholeModulesUsed = new Set<ts.Symbol>();
  const moduleOf = (specifier: ts.Expression): ts.Symbol | undefined => checker.getSymbolAtLocation(specifier);

  for (const file of sourceFiles) {
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && node.importClause) {
        const clause = node.importClause;
        if (clause.name) markName(clause.name);
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) {
          const mod = moduleOf(node.moduleSpecifier);
          if (mod) wholeModulesUsed.add(mod);
        } else if (bindings) bindings.elements.forEach((e) => markName(e.name));
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
        if (!node.exportClause) {
          const mod = moduleOf(node.moduleSpecifier);
          if (mod) wholeModulesUsed.add(mod);
        } else if (ts.isNamedExports(node.exportClause)) node.exportClause.elements.forEach((e) => markName(e.name));
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) {
        // A dynamic import may use anything the module exports.
        const mod = moduleOf(node.arguments[0]);
        if (mod) wholeModulesUsed.add(mod);
      } else if (ts.isImportTypeNode(node) && node.qualifier) {
        const symbol = checker.getSymbolAtLocation(node.qualifier);
        if (symbol) used.add(original(symbol));
      }
      ts.forEachChild(node, visit);
    };
    const markName = (name: ts.ModuleExportName): void => {
      const symbol = checker.getSymbolAtLocation(name);
      if (symbol) used.add(original(symbol));
    };
    visit(file);
  }

  const unused: UnusedExport[] = [];
  for (const file of sourceFiles) {
    const relative = path.relative(root, file.fileName);
    if (!relative.startsWith(`src${path.sep}`)) continue;
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (!moduleSymbol || wholeModulesUsed.has(moduleSymbol)) continue;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = original(exported);
      if (used.has(target) || used.has(exported)) continue;
      // Re-exported from here but declared elsewhere: judged where it is declared.
      if (target.declarations?.every((d) => d.getSourceFile() !== file)) continue;
      unused.push({ file: relative, name: exported.name, usedInFile: usedLocally(file, target) });
    }
  }
  return unused;

  function usedLocally(file: ts.SourceFile, symbol: ts.Symbol): boolean {
    let found = false;
    const visit = (node: ts.Node): void => {
      if (found) return;
      if (ts.isIdentifier(node) && node.text === symbol.name) {
        const at = checker.getSymbolAtLocation(node);
        const isDeclarationName = symbol.declarations?.some((d) => (d as ts.NamedDeclaration).name === node);
        if (at && original(at) === symbol && !isDeclarationName) found = true;
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
    return found;
  }
}
