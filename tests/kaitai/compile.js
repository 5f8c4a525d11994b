#!/usr/bin/env node
// Compiles .ksy files with the kaitai-struct-compiler npm package (a library with
// no command line) and writes the generated sources.
//
// usage: node compile.js LANGUAGE OUT_DIR FILE.ksy... [:: OUT_DIR FILE.ksy...]...
//
// Each `::` starts another output folder with its own files, so several schema
// copies compile in one process (loading the compiler takes seconds).
//
// Imports (`meta.imports`) are resolved next to the importing file.
'use strict';

const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const compiler = require('kaitai-struct-compiler');

function loadKsy(file) {
  return yaml.load(fs.readFileSync(file, 'utf8'));
}

function importerFor(dir) {
  return {
    importYaml(name, mode) {
      // `mode` is "rel" or "abs"; both resolve against the schema folder here.
      const file = path.resolve(dir, name.endsWith('.ksy') ? name : name + '.ksy');
      return Promise.resolve(loadKsy(file));
    },
  };
}

function jobs(args) {
  const out = [];
  let current = null;
  for (const a of args) {
    if (a === '::') {
      current = null;
    } else if (current === null) {
      current = { outDir: a, files: [] };
      out.push(current);
    } else {
      current.files.push(a);
    }
  }
  return out;
}

async function compileJob(lang, { outDir, files }) {
  fs.mkdirSync(outDir, { recursive: true });
  for (const file of files) {
    let out;
    try {
      out = await compiler.compile(lang, loadKsy(file), importerFor(path.dirname(file)), false);
    } catch (e) {
      // The compiler rejects with arrays of problems or plain errors.
      const detail = Array.isArray(e) ? e.map((p) => JSON.stringify(p)).join('\n') : (e && e.stack) || String(e);
      console.error(`${file}: compilation failed\n${detail}`);
      process.exit(1);
    }
    for (const [name, text] of Object.entries(out)) {
      fs.writeFileSync(path.join(outDir, name), text);
      console.log(`${file} -> ${path.join(outDir, name)}`);
    }
  }
}

async function main() {
  const [lang, ...rest] = process.argv.slice(2);
  const todo = jobs(rest);
  if (!lang || todo.length === 0 || todo.some((j) => j.files.length === 0)) {
    console.error('usage: node compile.js LANGUAGE OUT_DIR FILE.ksy... [:: OUT_DIR FILE.ksy...]...');
    process.exit(2);
  }
  if (!compiler.languages.includes(lang)) {
    console.error(`unknown language ${lang}; kaitai-struct-compiler ${compiler.version} supports: ${compiler.languages.join(', ')}`);
    process.exit(2);
  }
  for (const job of todo) {
    await compileJob(lang, job);
  }
}

main();
