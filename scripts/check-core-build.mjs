#!/usr/bin/env node
// The runtime-neutral build must not lean on Node: starting from each
// runtime-neutral entry of dist/ (ESM and CJS) and following its relative
// imports into the shared chunks, no file may import or require a `node:`
// module (or a bare Node built-in) or a module named only at run time, nor
// reference a Node-only global (`Buffer`, `process`, `global`, `setImmediate`,
// `clearImmediate`, `__dirname`, `__filename`), also as a property of
// `globalThis` or destructured out of it. Parsed with the TypeScript
// compiler, so words inside strings and comments ("process", "Buffer") do not
// count; property names of other objects (`x.process`) and local declarations
// do not either.
//
// payhook/node and the CLI are Node-only by design: their own files are
// scanned only for a Node built-in loaded without the `node:` prefix, which a
// bundler may resolve to an npm package of that name (tsup drops the prefix
// unless told not to).
// Usage: node scripts/check-core-build.mjs [dist directory]
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.argv[2] ?? join(root, 'dist'));
const ENTRIES = ['index', 'web', 'redis', 'postgres', 'cloudflare', 'sqlite', 'testing', 'explain'];
const FORBIDDEN_GLOBALS = new Set([
  'Buffer',
  'process',
  'global',
  'setImmediate',
  'clearImmediate',
  '__dirname',
  '__filename',
]);
const builtins = new Set(builtinModules);

function isNodeModule(specifier) {
  return specifier.startsWith('node:') || builtins.has(specifier) || builtins.has(specifier.split('/')[0]);
}

/** Identifiers that are property names or declarations, not references. */
function isReference(node) {
  const parent = node.parent;
  if (!parent) return true;
  if ((ts.isPropertyAccessExpression(parent) || ts.isQualifiedName(parent)) && parent.name === node) return false;
  if (
    (ts.isPropertyAssignment(parent) || ts.isMethodDeclaration(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name === node
  )
    return false;
  if (ts.isBindingElement(parent) && parent.propertyName === node) return false;
  // A local declaration is not the global; its uses are still reported (a build should not shadow these names).
  // A name destructured out of an object may be the global's own value, so it counts, unless it was reported as
  // taken out of globalThis.
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isParameter(parent) ||
      ts.isFunctionDeclaration(parent) ||
      ts.isClassDeclaration(parent)) &&
    parent.name === node
  )
    return false;
  if (ts.isBindingElement(parent) && parent.name === node && globalTaken(parent) !== undefined) return false;
  return true;
}

/**
 * The global a binding takes out of `globalThis` (`const { process } = globalThis`, also in parentheses, as a
 * parameter's default, or under a computed name written as text), if it does.
 */
function globalTaken(node) {
  const declaration = node.parent?.parent;
  if (!ts.isObjectBindingPattern(node.parent) || !declaration) return;
  if (!ts.isVariableDeclaration(declaration) && !ts.isParameter(declaration)) return;
  let from = declaration.initializer;
  while (from && ts.isParenthesizedExpression(from)) from = from.expression;
  if (!from || !ts.isIdentifier(from) || from.text !== 'globalThis') return;
  let key = node.propertyName ?? node.name;
  if (ts.isComputedPropertyName(key)) key = key.expression;
  return ts.isIdentifier(key) || ts.isStringLiteralLike(key) ? key.text : undefined;
}

function scan(file, nodeOnly = false) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const problems = [];
  const deps = [];
  const where = (node) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    return `${relative(root, file)}:${line + 1}:${character + 1}`;
  };
  const specifier = (node, value) => {
    if (isNodeModule(value)) {
      if (!nodeOnly) problems.push(`${where(node)} loads the Node module "${value}"`);
      else if (!value.startsWith('node:')) problems.push(`${where(node)} loads "${value}", not "node:${value}"`);
    } else if (value.startsWith('.')) deps.push(resolve(dirname(file), value));
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifier(node, node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        const [argument] = node.arguments;
        if (ts.isStringLiteralLike(argument)) specifier(node, argument.text);
        else problems.push(`${where(node)} loads a module named at run time`);
      }
    } else if (nodeOnly) {
      // Node's globals are fine here.
    } else if (
      (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'globalThis'
    ) {
      const name = ts.isPropertyAccessExpression(node)
        ? node.name.text
        : ts.isStringLiteralLike(node.argumentExpression)
          ? node.argumentExpression.text
          : undefined;
      if (name !== undefined && FORBIDDEN_GLOBALS.has(name))
        problems.push(`${where(node)} references globalThis.${name}`);
    } else if (ts.isBindingElement(node) && FORBIDDEN_GLOBALS.has(globalTaken(node))) {
      problems.push(`${where(node)} references globalThis.${globalTaken(node)}`);
    } else if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text) && isReference(node)) {
      problems.push(`${where(node)} references ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { problems, deps };
}

const seen = new Set();
const problems = [];
for (const entry of ENTRIES) {
  for (const extension of ['js', 'cjs']) {
    const start = join(dist, `${entry}.${extension}`);
    if (!existsSync(start)) {
      problems.push(`${relative(root, start)} is missing (run npm run build)`);
      continue;
    }
    const stack = [start];
    while (stack.length > 0) {
      const file = stack.pop();
      if (seen.has(file)) continue;
      seen.add(file);
      const result = scan(file);
      problems.push(...result.problems);
      stack.push(...result.deps);
    }
  }
}
// The Node-only entries, and any chunk only they reach (the core's chunks were scanned above, by the stricter rules).
const stack = ['node.js', 'node.cjs', 'cli.js'].map((file) => join(dist, file));
for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
  if (seen.has(file)) continue;
  seen.add(file);
  if (!existsSync(file)) {
    problems.push(`${relative(root, file)} is missing (run npm run build)`);
    continue;
  }
  const result = scan(file, true);
  problems.push(...result.problems);
  stack.push(...result.deps);
}
const files = [...seen].map((file) => relative(dist, file)).sort();
console.log(`check-core-build: scanned ${files.length} files (${files.join(', ')})`);
for (const problem of problems) console.log(`FAIL ${problem}`);
console.log(
  `check-core-build: ${problems.length === 0 ? 'no node: import, no Node global in the core; node: built-ins only in payhook/node and the CLI' : `${problems.length} problem(s)`}`,
);
process.exit(problems.length === 0 ? 0 : 1);
