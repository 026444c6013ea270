"""render.py renders chat templates with Python's Jinja2 as transformers'
apply_chat_template does (the environment of transformers'
_compile_jinja_template: ImmutableSandboxedEnvironment with trim_blocks and
lstrip_blocks, loopcontrols, the {% generation %} tag, raise_exception,
strftime_now and a tojson that is json.dumps with ensure_ascii=False), for
chat's optional second reference test (HLM_CHAT_PYTHON=1). It needs
python3 with jinja2, not transformers.

    python3 render.py < requests.jsonl > results.jsonl

The requests and results are render.mjs's (one JSON object a line).
"""
import sys, json, datetime
import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2 import nodes

NOW = [0]

class AssistantTracker(Extension):
    tags = {"generation"}
    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)
    def _render(self, caller):
        return caller()

def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

def strftime_now(fmt):
    return datetime.datetime.fromtimestamp(NOW[0] / 1000, datetime.timezone.utc).strftime(fmt)

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now
cache = {}
for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    try:
        src = req["template"]
        t = cache.get(src)
        if t is None:
            try:
                t = env.from_string(src)
            except Exception as e:
                t = e
            cache[src] = t
        if isinstance(t, Exception):
            raise t
        NOW[0] = req.get("now", 0)
        vars = dict(req.get("vars") or {})
        kw = {}
        if req.get("bos_token"): kw["bos_token"] = req["bos_token"]
        if req.get("eos_token"): kw["eos_token"] = req["eos_token"]
        kw.update(vars)
        tools = kw.pop("tools", None)
        documents = kw.pop("documents", None)
        out = {"text": t.render(messages=req["messages"], tools=tools, documents=documents, add_generation_prompt=req.get("add_generation_prompt", False), **kw)}
    except Exception as e:
        out = {"error": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
