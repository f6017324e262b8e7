// StyLua, from npm as WebAssembly (@johnnymorganz/stylua: no binary to download at install),
// with the repository's .stylua.toml, over the given files and directories.
//   node scripts/lua-format/stylua.mjs --check lua plugin demo tests   # scripts/test: lists
//   node scripts/lua-format/stylua.mjs lua plugin demo tests           # rewrites in place
// .stylua.toml is StyLua's own file (an editor's stylua reads the same); this reads its
// top-level `key = value` lines, which is all it holds.
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as stylua from "@johnnymorganz/stylua";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ENUMS = {
  block_newline_gaps: stylua.BlockNewlineGaps,
  call_parentheses: stylua.CallParenType,
  collapse_simple_statement: stylua.CollapseSimpleStatement,
  indent_type: stylua.IndentType,
  line_endings: stylua.LineEndings,
  quote_style: stylua.QuoteStyle,
  space_after_function_names: stylua.SpaceAfterFunctionNames,
  syntax: stylua.LuaVersion,
};

// formatCode takes its Config by value (wasm-bindgen frees it): one per file.
function configFrom(settings) {
  const config = stylua.Config.new();
  for (const [key, value] of settings) config[key] = value;
  return config;
}

function readSettings() {
  const known = stylua.Config.new();
  const settings = [];
  const text = readFileSync(join(root, ".stylua.toml"), "utf8");
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const m = /^(\w+)\s*=\s*(.+)$/.exec(line);
    if (!m) throw new Error(`.stylua.toml:${n + 1}: not a key = value line: ${raw}`);
    const [, key, value] = m;
    if (!(key in known)) throw new Error(`.stylua.toml:${n + 1}: unknown key ${key}`);
    if (key in ENUMS) {
      const name = JSON.parse(value);
      if (!(name in ENUMS[key])) throw new Error(`.stylua.toml:${n + 1}: ${key} = ${value}?`);
      settings.push([key, ENUMS[key][name]]);
    } else {
      settings.push([key, JSON.parse(value)]);
    }
  }
  return settings;
}

function luaFiles(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name !== "node_modules" && !name.startsWith(".")) luaFiles(join(path, name), out);
    }
  } else if (path.endsWith(".lua")) {
    out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const check = args[0] === "--check";
const paths = check ? args.slice(1) : args;
if (paths.length === 0) {
  console.error("usage: stylua.mjs [--check] PATH...");
  process.exit(2);
}
const settings = readSettings();
const differ = [];
for (const file of paths.flatMap((p) => luaFiles(p, []))) {
  const code = readFileSync(file, "utf8");
  const formatted = stylua.formatCode(code, configFrom(settings), null, stylua.OutputVerification.None);
  if (formatted === code) continue;
  if (!check) {
    writeFileSync(file, formatted);
    continue;
  }
  const a = code.split("\n");
  const b = formatted.split("\n");
  let line = 0;
  while (line < a.length && a[line] === b[line]) line++;
  differ.push(`${relative(process.cwd(), file)}:${line + 1}: stylua would write: ${b[line] ?? ""}`);
}
if (differ.length > 0) {
  console.error(differ.join("\n"));
  console.error(`${differ.length} file(s) not formatted: node scripts/lua-format/stylua.mjs PATH`);
  process.exit(1);
}
