// jsref.mjs: the JavaScript reference tokenizers for hlm's tests.
//
// Reads one JSON request per line on stdin and writes one JSON result per
// line on stdout, so a Go test runs it as one subprocess for many texts:
//
//   {"lib": "hf" | "lenml", "dir": DIR, "texts": [...], "add_special": bool}
//     -> {"ids": [[...], ...]}       token ids of each text
//   {"lib": ..., "dir": DIR, "decode": [[...], ...]}
//     -> {"texts": [...]}            decoded text of each id list
//   anything that throws -> {"error": "message"}
//
// "hf" is Hugging Face's @huggingface/tokenizers (the JavaScript port of
// the tokenizers library); "lenml" is @lenml/tokenizers (a fork of
// transformers.js's tokenizers). DIR holds tokenizer.json and, optionally,
// tokenizer_config.json. NODE_PATH must name the node_modules directory of
// internal/refs/fetch.sh.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.NODE_PATH ?? ".", "x.js"));
const cache = new Map();

async function load(lib, dir) {
  const key = lib + "\0" + dir;
  if (cache.has(key)) return cache.get(key);
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const cfgPath = path.join(dir, "tokenizer_config.json");
  const config = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {};
  let tok;
  if (lib === "hf") {
    const mod = await import(require.resolve("@huggingface/tokenizers"));
    const Tokenizer = mod.Tokenizer ?? mod.default.Tokenizer;
    const t = new Tokenizer(json, config);
    tok = {
      encode: (s, add) => t.encode(s, { add_special_tokens: add }).ids,
      decode: (ids) => t.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    };
  } else if (lib === "lenml") {
    const mod = await import(require.resolve("@lenml/tokenizers"));
    const TokenizerLoader = mod.TokenizerLoader ?? mod.default.TokenizerLoader;
    const t = TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config });
    tok = {
      encode: (s, add) => t.encode(s, { add_special_tokens: add }),
      decode: (ids) => t.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    };
  } else {
    throw new Error(`unknown lib ${lib}`);
  }
  cache.set(key, tok);
  return tok;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out;
  try {
    const req = JSON.parse(line);
    const tok = await load(req.lib, req.dir);
    if (req.decode) {
      out = { texts: req.decode.map((ids) => (ids.length ? tok.decode(ids) : "")) };
    } else {
      out = { ids: req.texts.map((s) => Array.from(tok.encode(s, !!req.add_special))) };
    }
  } catch (e) {
    out = { error: String(e && e.stack ? e.stack : e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
