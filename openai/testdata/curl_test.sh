#!/usr/bin/env bash
# curl_test.sh BASE_URL [API_KEY]
#
# Exercises an OpenAI-compatible endpoint (hlm edge --openai, or the
# httptest server of curl_test.go) with stock curl: health, models,
# completions and chat completions, whole and streamed, and two errors.
# It checks the shapes only, so it works against a real model too.
# Exits non-zero on the first failure.
set -euo pipefail

base=${1:?usage: curl_test.sh BASE_URL [API_KEY]}
base=${base%/}
key=${2:-}
auth=()
if [[ -n $key ]]; then
	auth=(-H "Authorization: Bearer $key")
fi

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# c runs curl on the endpoint, never through a proxy.
c() {
	curl --noproxy '*' --silent --show-error --max-time 30 ${auth[@]+"${auth[@]}"} "$@"
}

# expect NAME OUTPUT STRING: OUTPUT must contain STRING (fixed, not a regex).
expect() {
	grep -qF -- "$3" <<<"$2" || fail "$1: no '$3' in:
$2"
}

# ends_with_done NAME OUTPUT: the last non-blank line is "data: [DONE]".
ends_with_done() {
	local last
	last=$(grep -v '^$' <<<"$2" | tail -n 1)
	[[ $last == 'data: [DONE]' ]] || fail "$1: the stream ends with '$last', not 'data: [DONE]'"
}

json=(-H 'Content-Type: application/json')

out=$(c --fail "$base/healthz") || fail "healthz"
expect healthz "$out" '"status":"ok"'
echo "ok   healthz"

out=$(c --fail "$base/v1/models") || fail "models"
expect models "$out" '"object":"list"'
expect models "$out" '"object":"model"'
echo "ok   models"

out=$(c --fail "${json[@]}" "$base/v1/completions" \
	-d '{"model":"hlm","prompt":"Once upon a time","max_tokens":8}') || fail "completions"
expect completions "$out" '"object":"text_completion"'
expect completions "$out" '"finish_reason":'
expect completions "$out" '"usage":{"prompt_tokens":'
echo "ok   completions"

out=$(c --fail -N "${json[@]}" "$base/v1/completions" \
	-d '{"model":"hlm","prompt":"Once upon a time","max_tokens":8,"stream":true}') || fail "completions stream"
expect "completions stream" "$out" 'data: {'
expect "completions stream" "$out" '"object":"text_completion"'
expect "completions stream" "$out" 'data: [DONE]'
ends_with_done "completions stream" "$out"
echo "ok   completions stream"

out=$(c --fail "${json[@]}" "$base/v1/chat/completions" \
	-d '{"model":"hlm","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":8}') || fail "chat"
expect chat "$out" '"object":"chat.completion"'
expect chat "$out" '"message":{"role":"assistant","content":'
echo "ok   chat"

out=$(c --fail -N "${json[@]}" "$base/v1/chat/completions" \
	-d '{"model":"hlm","messages":[{"role":"user","content":"Hi"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}') || fail "chat stream"
expect "chat stream" "$out" '"object":"chat.completion.chunk"'
expect "chat stream" "$out" '"delta":{"role":"assistant","content":""}'
expect "chat stream" "$out" '"choices":[],"usage":{"prompt_tokens":'
expect "chat stream" "$out" 'data: [DONE]'
ends_with_done "chat stream" "$out"
echo "ok   chat stream"

code=$(c -o /dev/null -w '%{http_code}' "$base/v1/no/such/path") || fail "404 request"
[[ $code == 404 ]] || fail "unknown path: status $code, want 404"
out=$(c -w '\n%{http_code}' "${json[@]}" "$base/v1/completions" -d '{"prompt":') || fail "400 request"
[[ $(tail -n 1 <<<"$out") == 400 ]] || fail "invalid JSON: want status 400, got: $out"
expect "invalid JSON" "$out" '"type":"invalid_request_error"'
echo "ok   errors"

if [[ -n $key ]]; then
	code=$(curl --noproxy '*' -sS -o /dev/null -w '%{http_code}' "$base/v1/models") || fail "401 request"
	[[ $code == 401 ]] || fail "no API key: status $code, want 401"
	echo "ok   auth"
fi
echo PASS
