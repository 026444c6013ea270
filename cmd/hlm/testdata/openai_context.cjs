// Drives hlm's OpenAI-compatible endpoint with OpenAI's official Node
// client and checks its context policy (docs/deploy.md §5):
//   - a prompt that does not fit the context: HTTP 400, type
//     invalid_request_error, code context_length_exceeded, param "prompt"
//     (completions) or "messages" (chat);
//   - a prompt that fits with max_tokens past the context: the generation
//     stops when the context is full, finish_reason "length", and the usage
//     counts the prompt tokens the model saw and the tokens it generated.
// usage: node openai_context.cjs SDK_DIR BASE_URL CONTEXT PROMPT_TOKENS
// (PROMPT_TOKENS: the token count of the short prompt below, BOS included).
const [sdk, baseURL, ctxArg, promptArg] = process.argv.slice(2);
const OpenAI = require(sdk).OpenAI;
const ctx = Number(ctxArg), promptTokens = Number(promptArg);
const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0 });
const long = "Once upon a time there was a little girl who liked to play. ".repeat(60);
const short = "Once upon a time";
let failed = false;
const fail = (msg) => { console.log("FAIL: " + msg); failed = true; };

async function refused(what, call, param) {
  try {
    await call();
    fail(what + ": a prompt past the context was answered");
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    if (e.status !== 400 || e.type !== "invalid_request_error" || e.code !== "context_length_exceeded" || e.param !== param)
      fail(`${what}: status ${e.status}, type ${e.type}, code ${e.code}, param ${e.param}`);
    else console.log(`${what}: 400 ${e.code} (${e.message})`);
  }
}

function stoppedAtContext(what, finish, usage) {
  const room = ctx - 1 - promptTokens; // the round loop keeps one position free
  if (finish !== "length") fail(`${what}: finish_reason ${finish}, want length`);
  if (usage.prompt_tokens !== promptTokens) fail(`${what}: prompt_tokens ${usage.prompt_tokens}, the model saw ${promptTokens}`);
  if (usage.completion_tokens < 1 || usage.completion_tokens > room) fail(`${what}: completion_tokens ${usage.completion_tokens} outside [1, ${room}]`);
  if (usage.total_tokens !== usage.prompt_tokens + usage.completion_tokens) fail(`${what}: total_tokens ${usage.total_tokens}`);
  if (usage.total_tokens > ctx) fail(`${what}: total_tokens ${usage.total_tokens} past the context ${ctx}`);
  console.log(`${what}: finish ${finish}, usage ${JSON.stringify(usage)}`);
}

(async () => {
  await refused("completion", () => client.completions.create({ model: "hlm", prompt: long, max_tokens: 8 }), "prompt");
  await refused("chat", () => client.chat.completions.create({ model: "hlm", messages: [{ role: "user", content: long }], max_tokens: 8 }), "messages");
  const r = await client.completions.create({ model: "hlm", prompt: short, max_tokens: 4 * ctx, temperature: 1, seed: 3 });
  stoppedAtContext("completion, max_tokens past the context", r.choices[0].finish_reason, r.usage);
  let finish = null, usage = null;
  const stream = await client.completions.create({ model: "hlm", prompt: short, max_tokens: 4 * ctx, seed: 3, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) {
    if (chunk.choices.length && chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  stoppedAtContext("streamed completion", finish, usage);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log("FAIL: " + e.stack); process.exit(1); });
