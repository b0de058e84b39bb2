// The core-build scan (scripts/check-core-build.mjs) must catch what it
// promises to catch, and only that: a check that never fails proves nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = resolve(import.meta.dirname, '..', '..', 'scripts', 'check-core-build.mjs');
const dirs: string[] = [];

function fakeDist(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'payhook-dist-'));
  dirs.push(dir);
  mkdirSync(dir, { recursive: true });
  const clean = {
    'index.js': 'export {};',
    'index.cjs': '',
    'web.js': 'export {};',
    'web.cjs': '',
    'redis.js': 'export {};',
    'redis.cjs': '',
    'postgres.js': 'export {};',
    'postgres.cjs': '',
    'cloudflare.js': 'export {};',
    'cloudflare.cjs': '',
    'sqlite.js': 'export {};',
    'sqlite.cjs': '',
    'testing.js': 'export {};',
    'testing.cjs': '',
    'explain.js': 'export {};',
    'explain.cjs': '',
    'node.js': 'import { verify } from "node:crypto";\nexport const v = verify; export const b = Buffer;',
    'node.cjs': 'module.exports = require("node:crypto");',
    'cli.js': 'import { createServer } from "node:http";\nprocess.exit(0);',
  };
  for (const [name, text] of Object.entries({ ...clean, ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

function scan(dir: string) {
  const result = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  return { code: result.status, output: result.stdout + result.stderr };
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('check-core-build', () => {
  it('passes a build that only mentions the words in strings, comments and property names', () => {
    const dir = fakeDist({
      'index.js':
        'import { x } from "./chunk-a.js";\n// process and Buffer in a comment\nexport const s = "process Buffer node:fs" + x;\nconst o = { process: 1 }; o.Buffer = 2; const { process: p } = o;',
      'chunk-a.js': 'export const x = globalThis.crypto.subtle ? "ok" : "";',
    });
    const { code, output } = scan(dir);
    expect(output).toContain('no node: import, no Node global');
    expect(output).toContain('chunk-a.js');
    expect(code).toBe(0);
  });

  it('follows chunks and reports node: imports, bare built-ins, require, dynamic import, Buffer and process', () => {
    const dir = fakeDist({
      'index.js': 'export * from "./chunk-b.js";',
      'chunk-b.js':
        'import { readFile } from "node:fs/promises";\nexport const b = Buffer.from("x");\nawait import("crypto");',
      'index.cjs': 'const u = require("node:util");\nmodule.exports = { env: process.env, process };',
    });
    const { code, output } = scan(dir);
    expect(code).toBe(1);
    expect(output).toMatch(/chunk-b\.js:1:\d+ loads the Node module "node:fs\/promises"/);
    expect(output).toMatch(/chunk-b\.js:2:\d+ references Buffer/);
    expect(output).toMatch(/chunk-b\.js:3:\d+ loads the Node module "crypto"/);
    expect(output).toMatch(/index\.cjs:1:\d+ loads the Node module "node:util"/);
    expect(output.match(/index\.cjs:2:\d+ references process/g)).toHaveLength(2);
  });

  it('reports the other Node globals, also through globalThis, and a module named at run time', () => {
    const dir = fakeDist({
      'web.js': [
        'setImmediate(() => {});',
        'export const d = __dirname + __filename;',
        'global.Buffer = 1;',
        'export const env = globalThis.process.env;',
        'export const b = globalThis["Buffer"];',
        'const name = "fs"; await import(name);',
        'export const ok = globalThis.crypto;',
        'const { process: p, crypto } = globalThis; const { Buffer } = globalThis;',
        'let global = 1; global += 1;',
        "const { process: q } = (globalThis); function f({ Buffer: b } = globalThis) {} const { ['process']: r } = globalThis;",
        'const { a: { process } } = { a: globalThis }; const { Buffer } = someObject;',
      ].join('\n'),
    });
    const { code, output } = scan(dir);
    expect(code).toBe(1);
    expect(output).toMatch(/web\.js:1:\d+ references setImmediate/);
    expect(output).toMatch(/web\.js:2:\d+ references __dirname/);
    expect(output).toMatch(/web\.js:2:\d+ references __filename/);
    expect(output).toMatch(/web\.js:3:\d+ references global\b/);
    expect(output).toMatch(/web\.js:4:\d+ references globalThis\.process/);
    expect(output).toMatch(/web\.js:5:\d+ references globalThis\.Buffer/);
    expect(output).toMatch(/web\.js:6:\d+ loads a module named at run time/);
    expect(output).not.toMatch(/web\.js:7/);
    expect(output).toMatch(/web\.js:8:\d+ references globalThis\.process/);
    expect(output).toMatch(/web\.js:8:\d+ references globalThis\.Buffer/);
    expect(output).not.toMatch(/web\.js:8:\d+ references (process|Buffer|globalThis\.crypto)/);
    // A local named like a Node global: each use reported once, its declaration not.
    expect(output.match(/web\.js:9:\d+ references global\b/g)).toHaveLength(1);
    // In parentheses, as a parameter's default, under a computed name: each taken out of globalThis.
    expect(output.match(/web\.js:10:\d+ references globalThis\.(process|Buffer)/g)).toHaveLength(3);
    // Destructured out of another object (globalThis nested in it, say): counted, as the scan follows no values.
    expect(output).toMatch(/web\.js:11:\d+ references process/);
    expect(output).toMatch(/web\.js:11:\d+ references Buffer/);
  });

  it('lets payhook/node and the CLI use Node, but reports a built-in they load without node:', () => {
    expect(scan(fakeDist({})).code).toBe(0);
    const dir = fakeDist({
      'node.js': 'import * as c from "crypto";\nexport const b = Buffer;\nexport * from "./chunk-node.js";',
      'chunk-node.js': 'export { readFile } from "fs";\nexport { writeFile } from "node:fs";',
      'node.cjs': 'module.exports = require("crypto");',
      'cli.js': 'import { createServer } from "http";',
    });
    const { code, output } = scan(dir);
    expect(code).toBe(1);
    expect(output).toMatch(/node\.js:1:\d+ loads "crypto", not "node:crypto"/);
    expect(output).toMatch(/node\.cjs:1:\d+ loads "crypto", not "node:crypto"/);
    expect(output).toMatch(/cli\.js:1:\d+ loads "http", not "node:http"/);
    expect(output).toMatch(/chunk-node\.js:1:\d+ loads "fs", not "node:fs"/);
    expect(output).not.toContain('chunk-node.js:2');
    expect(output).not.toContain('references Buffer');
  });

  it('fails when an entry is missing', () => {
    const dir = fakeDist({});
    rmSync(join(dir, 'web.cjs'));
    const { code, output } = scan(dir);
    expect(code).toBe(1);
    expect(output).toContain('web.cjs is missing');
  });
});
