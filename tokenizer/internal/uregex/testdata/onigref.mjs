// onigref.mjs: the reference matches of Oniguruma patterns, as Hugging
// Face's @huggingface/tokenizers (tokenizers.js) computes them for a Split
// pre-tokenizer.
//
// Usage: node onigref.mjs <dir of @huggingface/tokenizers> < requests
//
// Each input line is a JSON object {"pattern": ..., "text": ...}; each
// output line is {"matches": [[start, end], ...], "pieces": [...]} with the
// matches of the Split pre-tokenizer's compiled pattern (its translation of
// the Oniguruma pattern to a JavaScript RegExp) as UTF-8 byte offsets in
// the order String.prototype.matchAll gives them, and the pieces its
// pre_tokenize_text returns for behavior "Isolated"; or {"error": ...}
// when the package cannot translate the pattern.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const dir = process.argv[2];
const mod = await import(pathToFileURL(join(dir, "dist", "tokenizers.mjs")).href);
const { SplitPreTokenizer } = mod;

const splitters = new Map();
function splitter(pattern) {
  let s = splitters.get(pattern);
  if (s === undefined) {
    try {
      s = new SplitPreTokenizer({ type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false });
      if (!(s.pattern instanceof RegExp)) throw new Error("no RegExp compiled");
    } catch (e) {
      s = { error: String(e && e.message ? e.message : e) };
    }
    splitters.set(pattern, s);
  }
  return s;
}

// byteOffsets maps each UTF-16 index of text (and its length) to the UTF-8
// byte offset.
function byteOffsets(text) {
  const off = new Array(text.length + 1);
  let b = 0;
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i);
    const units = cp > 0xffff ? 2 : 1;
    off[i] = b;
    if (units === 2) off[i + 1] = b;
    b += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += units;
  }
  off[text.length] = b;
  return off;
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === "") continue;
  const { pattern, text } = JSON.parse(line);
  const s = splitter(pattern);
  if (s.error !== undefined) {
    process.stdout.write(JSON.stringify({ error: s.error }) + "\n");
    continue;
  }
  const off = byteOffsets(text);
  const matches = [];
  for (const m of text.matchAll(s.pattern)) {
    matches.push([off[m.index], off[m.index + m[0].length]]);
  }
  const pieces = s.pre_tokenize_text(text);
  process.stdout.write(JSON.stringify({ matches, pieces }) + "\n");
}
