// render.mjs renders chat templates with Hugging Face's JavaScript Jinja
// engine (@huggingface/jinja) the way transformers.js's
// PreTrainedTokenizer.apply_chat_template does, for chat's reference tests.
//
//	node render.mjs NODE_MODULES_DIR < requests.jsonl > results.jsonl
//
// Each line of stdin is one request:
//
//	{"template": "...", "messages": [...], "add_generation_prompt": false,
//	 "bos_token": "<s>", "eos_token": "</s>", "vars": {...}, "now": 1721997296000}
//
// and each line of stdout the answer to the request on the same line:
// {"text": "..."} or {"error": "..."}.
//
// The context is transformers.js's: messages, add_generation_prompt, tools
// and documents (null unless vars has them), each special token that is not
// empty, then the other vars. "now" (milliseconds since the Unix epoch, UTC)
// is the clock that strftime_now reads; run with TZ=UTC so that it prints UTC.
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
if (!modules) {
	console.error("usage: node render.mjs NODE_MODULES_DIR");
	process.exit(2);
}
const { Template } = await import(pathToFileURL(join(modules, "@huggingface", "jinja", "dist", "index.js")).href);

// A clock the requests set: `new Date()` without arguments reads `now`.
let now = 0;
const RealDate = Date;
globalThis.Date = class extends RealDate {
	constructor(...args) {
		if (args.length === 0) {
			super(now);
		} else {
			super(...args);
		}
	}
	static now() {
		return now;
	}
};

const compiled = new Map();

function render(req) {
	let tmpl = compiled.get(req.template);
	if (tmpl === undefined) {
		try {
			tmpl = new Template(req.template);
		} catch (err) {
			tmpl = err;
		}
		compiled.set(req.template, tmpl);
	}
	if (tmpl instanceof Error) {
		throw tmpl;
	}
	now = req.now ?? 0;
	const vars = { ...(req.vars ?? {}) };
	const tools = vars.tools ?? null;
	const documents = vars.documents ?? null;
	delete vars.tools;
	delete vars.documents;
	const special = {};
	if (req.bos_token) special.bos_token = req.bos_token;
	if (req.eos_token) special.eos_token = req.eos_token;
	return tmpl.render({
		messages: req.messages,
		add_generation_prompt: req.add_generation_prompt ?? false,
		tools,
		documents,
		...special,
		...vars,
	});
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (line === "") continue;
	let out;
	try {
		out = { text: render(JSON.parse(line)) };
	} catch (err) {
		out = { error: String(err && err.message !== undefined ? err.message : err) };
	}
	process.stdout.write(JSON.stringify(out) + "\n");
}
