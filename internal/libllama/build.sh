#!/usr/bin/env bash
# Builds llama.cpp's shared library — libllama.so and the ggml libraries it
# loads (libggml.so, libggml-base.so, libggml-cpu.so, libggml-rpc.so) — for
# hlm's llama.cpp backend (model/llamacpp), from the llama.cpp source the
# project already uses for its references: the bundle that npm's
# node-llama-cpp@3.22.1 ships (llama.cpp 0.5.0, commit de3ff81), the same tree
# ../shared/perf/llamacpp.sh and internal/refs/fetch.sh clone. Nothing is
# committed or vendored; the build lives in a cache outside the repository:
#
#   $HLM_PEERS/libllama/<commit>-<kind>/build/bin/libllama.so
#   $HLM_PEERS/libllama/<commit>-<kind>/build/bin/include/   llama.h and ggml's headers
#   $HLM_PEERS/libllama/<commit>-<kind>/src -> the source tree it was built from
#   $HLM_PEERS/libllama/current -> the last CPU library built or found here
#
# $HLM_PEERS defaults to ~/.cache/hlm-peers. Prints the library's path (pass
# it as hlm --llama-lib PATH or HLM_LLAMA_LIB=PATH; hlm and its tests also
# look at $HLM_PEERS/libllama/current). Idempotent: a second run with the
# library present prints its path at once.
#
# <kind> is "cpu-<hash of this CPU's flags>": the CPU backend is built with
# GGML_NATIVE=ON (-march=native), so it runs at llama.cpp's full speed here
# — the same flags as ../shared/perf/llamacpp.sh's llama-bench, which the
# benchmarks compare with — and a cache restored on a machine of another CPU
# kind (CI runners change) misses and rebuilds instead of dying of an
# illegal instruction. (The portable alternative, GGML_NATIVE=OFF with
# GGML_BACKEND_DL and GGML_CPU_ALL_VARIANTS, compiles the CPU backend a dozen
# times: far beyond CI's time on two cores.) With LIBLLAMA_CUDA=1 the kind is
# "cuda-<hash>" and the build adds -DGGML_CUDA=ON (needs the CUDA toolkit;
# LIBLLAMA_CUDA_ARCH sets CMAKE_CUDA_ARCHITECTURES, default "native").
# LIBLLAMA_CMAKE_ARGS adds CMake options (split at spaces), e.g.
# "-G Ninja -DGGML_CUDA_FA=OFF" for a short build on a lent GPU machine.
#
# GGML_RPC=ON builds the RPC backend too (hosts joined through
# ggml-rpc-server); LIBLLAMA_TARGETS adds targets to build beside the library
# (e.g. "ggml-rpc-server llama-bench llama-server" for the benchmarks and the
# RPC test). About 4 minutes on 2 cores for the library alone.
#
# Another supported llama.cpp version, to test the binding against it:
# LIBLLAMA_PKG=node-llama-cpp@3.21.1 builds the llama.cpp that npm package
# bundles (3.21.1: llama.cpp 0.4.0, commit 80fb11a; its source cloned into
# $HLM_PEERS/libllama/src-3.21.1), LIBLLAMA_SRC=DIR a source tree of your
# own. Either leaves $HLM_PEERS/libllama/current alone.
#
#   internal/libllama/build.sh            -> prints .../build/bin/libllama.so
set -euo pipefail
peers=${HLM_PEERS:-$HOME/.cache/hlm-peers}
pkg=node-llama-cpp@3.22.1
want_commit=de3ff81

# bundle_clone PKG DIR clones the llama.cpp source that npm package PKG
# bundles into DIR.
bundle_clone() {
	command -v npm >/dev/null 2>&1 || { echo "libllama: npm is needed to fetch llama.cpp's source ($1)" >&2; exit 1; }
	local tmp
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "$1" >/dev/null 2>&1 && tar -xzf node-llama-cpp-*.tgz package/llama/gitRelease.bundle) || {
		rm -rf "$tmp"
		echo "libllama: could not fetch $1 with npm" >&2
		exit 1
	}
	mkdir -p "$(dirname "$2")"
	rm -rf "$2.tmp"
	git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$2.tmp"
	rm -rf "$tmp"
	mv "$2.tmp" "$2"
}

# The source: the tree llamacpp.sh cloned, else the one fetch.sh cloned, else
# a clone of the bundle of our own.
src=${LIBLLAMA_SRC:-}
if [ -z "$src" ] && [ -n "${LIBLLAMA_PKG:-}" ]; then
	src=$peers/libllama/src-${LIBLLAMA_PKG##*@}
	[ -f "$src/include/llama.h" ] || bundle_clone "$LIBLLAMA_PKG" "$src"
fi
if [ -n "$src" ]; then
	[ -f "$src/include/llama.h" ] && [ -f "$src/CMakeLists.txt" ] || { echo "libllama: $src is no llama.cpp source tree" >&2; exit 1; }
	src=$(cd "$src" && pwd -P)
fi
for t in "$peers/llama.cpp" "${HLM_REFS:-$HOME/.cache/hlm-refs}/llama.cpp"; do
	[ -z "$src" ] || break
	if [ -f "$t/include/llama.h" ] && [ -f "$t/CMakeLists.txt" ]; then
		src=$(cd "$t" && pwd -P)
		break
	fi
done
if [ -z "$src" ]; then
	src=$peers/libllama/src
	[ -f "$src/include/llama.h" ] || bundle_clone "$pkg" "$src"
fi
other=${LIBLLAMA_SRC:-}${LIBLLAMA_PKG:-} # another version: not "current"
# A tree unpacked from bench/gpu.sh's kit is no git checkout: its COMMIT
# file names the commit it was archived from.
commit=$(git -C "$src" rev-parse --short=7 HEAD 2>/dev/null || head -c 7 "$src/COMMIT" 2>/dev/null || echo unknown)
if [ "$commit" != "$want_commit" ] && [ -z "$other" ]; then
	echo "libllama: warning: $src is at $commit, hlm's backend was written against $want_commit (it checks the version at load)" >&2
fi

if [ "${LIBLLAMA_CUDA:-0}" = 1 ]; then
	kind=cuda
	extra=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${LIBLLAMA_CUDA_ARCH:-native}")
else
	kind=cpu
	extra=()
fi
cpukey=$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-12)
dir=$peers/libllama/$commit-$kind-$cpukey
lib=$dir/build/bin/libllama.so
targets=(llama ggml-cpu ${LIBLLAMA_TARGETS:-})

have_all() {
	[ -f "$lib" ] || return 1
	local t
	for t in ${LIBLLAMA_TARGETS:-}; do
		[ -x "$dir/build/bin/$t" ] || return 1
	done
}
if ! have_all; then
	{ command -v cmake >/dev/null && command -v g++ >/dev/null; } || {
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
			apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ make git >/dev/null
		else
			echo "libllama: cmake and g++ are needed" >&2
			exit 1
		fi
	}
	mkdir -p "$dir"
	log=$dir/build.log
	start=$(date +%s)
	{
		cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
			-DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=ON -DGGML_RPC=ON \
			-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
			-DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF "${extra[@]}" ${LIBLLAMA_CMAKE_ARGS:-} &&
			cmake --build "$dir/build" -j"$(nproc)" --target "${targets[@]}"
	} >"$log" 2>&1 || {
		echo "libllama: build failed; last lines of $log:" >&2
		tail -n 20 "$log" >&2
		exit 1
	}
	echo "libllama: built $lib in $(($(date +%s) - start)) s" >&2
fi
# The headers beside the library: the backend's tests compile llama.cpp's
# own C harness (model/llama/testdata/families/tools/golden.cpp) against it.
ln -sfn "$src" "$dir/src"
mkdir -p "$dir/build/bin/include"
cp "$src/include/llama.h" "$src/ggml/include/"*.h "$dir/build/bin/include/"
[ "$kind" = cpu ] && [ -z "$other" ] && ln -sfn "$dir/build/bin" "$peers/libllama/current"
echo "$lib"
