#!/usr/bin/env bash
# The llama.cpp backend on an NVIDIA GPU, unattended: what the CPU runs of
# bench/llamacpp.sh and model/llamacpp's tests measured, on the day a GPU
# machine is lent (the `device` tool, where it is available).
#
#   build        libllama with CUDA (LIBLLAMA_CUDA=1 internal/libllama/build.sh,
#                with llama-bench, llama-server, llama-quantize, ggml-rpc-server);
#                always first, at once when it is built
#   files        the real shapes, if missing (bench/families/gen_shapes.py,
#                then the build's llama-quantize) in $HLM_PERF_WORK/families,
#                where the tests' TestDeterminismRealShapes finds them
#   determinism  model/llamacpp's tests with that library and every layer on
#                the GPU (HLM_TEST_NGL=$NGL; by default the tests put none
#                there), so that what holds there is measured, not assumed —
#                llama.cpp does not promise batch invariance on CUDA (its
#                issue #20063): a test of the CPU's contract that fails here
#                is a measurement, its message the size of the difference
#   serve        cloud's TestLlamaCpp*: hlm serve on the backend end to end
#                (losslessness by chi-square, every method, eviction)
#   binding      hlm bench (backend, ngl=99) vs llama-bench -ngl 99 -fa 0
#   capacity     N devices against hlm serve on the llama.cpp backend (ngl=99),
#                the same batches by llama.cpp alone (rounds.cpp, ngl 99), and
#                llama-server -np N -ngl 99 as the LLM-only reference — the
#                memory-bound case, where verifying L+1 positions costs about
#                what decoding one does
#   serverwork   cloud.BenchmarkServerWork on this machine's CPU threads:
#                hlm serve's own work per verification (an LLM that costs
#                nothing, Qwen's vocabulary), what a GPU's decode cannot hide,
#                and one coupled race per kernel level of this CPU
#                (speculative.BenchmarkRaceLogits); needs neither the GPU nor
#                the library (seconds)
#   split        with two GPUs or more: layer and row split
#
#   usage:
#     bench/gpu.sh prepare [KIT]     where Go is (here): the binaries, built
#                                    with CGO_ENABLED=0, and llama.cpp's source
#                                    into KIT (default .gpu, which git ignores
#                                    through .git/info/exclude), for a GPU
#                                    machine that has neither Go nor a network
#     bench/gpu.sh [STEP...]         on the GPU machine, from the repository
#                                    root; STEPs as above (default: all, in
#                                    order). Each step's report is appended to
#                                    $OUT/report.md (default /tmp/hlm-gpu).
#
#   needs: nvidia-smi, the CUDA toolkit (nvcc), cmake, g++, python3 with
#   numpy; Go ≥ 1.25 and llama.cpp's source (the build script clones
#   node-llama-cpp@3.22.1's bundle with npm) unless HLM_GPU_KIT names a kit.
#   environment:
#     HLM_GPU_KIT=DIR      use `prepare`'s binaries and source (unpacked into
#                          $HLM_PEERS/llama.cpp, default /tmp/hlm-peers)
#     DURATION=15s  DEVICES="1 8 32 64"
#     SHAPES="qwen3-0.6b llama3.2-1b llama3.1-8b"   files and binding
#     FILES="qwen3-0.6b-q8_0 ..."  the files instead of SHAPES × (Q8_0, Q4_K_M)
#     CAP_SHAPES (default: every file's)            capacity
#     CAP_SYSTEMS="hlm direct llama-server"  capacity's servers (hlm serve
#                          always; rounds.cpp; llama-server)
#     CAP_PROFILE=1        a CPU profile of each hlm serve run (go tool pprof)
#     BIND_TESTS="-p 0 -n 128,-p 8 -n 0,-p 512 -n 0"   the binding's tests
#     POLL=0, OMP_WAIT_POLICY=PASSIVE   as bench/llamacpp.sh
#     LIBLLAMA_CUDA_ARCH, LIBLLAMA_CMAKE_ARGS       passed to build.sh
#     DET_TIMEOUT=240s     each test binary's -test.timeout
#     PYTHON               a Python with numpy (default: python3, else /usr/bin/python3)
#     THREADS (default nproc)  every engine's CPU threads
#     LIBLLAMA_CUDA=0 NGL=0   rehearse on a CPU: the CPU library, no layers
#                             on a GPU (every step but split)
#
#   A lease of 15 minutes holds no full run. What ran on an NVIDIA H200
#   (docs/BENCHMARKS.md, "On a GPU: NVIDIA H200"), after `bench/gpu.sh
#   prepare` here, in three calls of the device tool:
#     export HLM_GPU_KIT=.gpu LIBLLAMA_CUDA_ARCH=90 \
#       LIBLLAMA_CMAKE_ARGS="-G Ninja -DGGML_CUDA_FA=OFF -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=none" \
#       FILES="qwen3-0.6b-q8_0 llama3.2-1b-q4_k_m" CAP_SHAPES=qwen3-0.6b DEVICES="1 8 32" DURATION=5s
#     bench/gpu.sh build files binding determinism     (4 minutes; build 176 s)
#     bench/gpu.sh capacity serve                       (1.5 minutes, warm)
#     CAP_SYSTEMS="hlm direct" CAP_PROFILE=1 BIND_TESTS="-p 0 -n 128,-p 8 -n 0" \
#       bench/gpu.sh build files capacity binding       (5 minutes, fresh machine)
#   The next lease, to measure what was built since (the server's work cut
#   about 3× on the CPU, then the coupled race run from the logits; rows
#   read in llama.cpp's buffer, hlm bench's too; decodes on one thread of
#   an OpenMP build, a ggml threadpool attached): the same exports,
#     CAP_SYSTEMS="hlm direct" CAP_PROFILE=1 BIND_TESTS="-p 0 -n 128,-p 8 -n 0" \
#       bench/gpu.sh build files capacity serverwork binding
set -euo pipefail
root=$(pwd)

# build_bins DIR [GO FLAGS…]: the Go programs the steps run, into DIR.
build_bins() {
	local dir=$1
	shift
	go build "$@" -o "$dir/hlm" ./cmd/hlm
	go build "$@" -o "$dir/capacity" ./bench/capacity
	go test -c "$@" -o "$dir/llamacpp.test" ./model/llamacpp
	go test -c "$@" -o "$dir/cloud.test" ./cloud
	go test -c "$@" -o "$dir/speculative.test" ./speculative
}

if [[ ${1:-} == prepare ]]; then
	kit=${2:-.gpu}
	mkdir -p "$kit/bin"
	[[ $kit == .gpu ]] && { grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude; }
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	# Stripped and compressed with xz, the kit and the repository fit the
	# device tool's 64 MiB (about 34 MB of kit).
	build_bins "$kit/bin" -trimpath -ldflags='-s -w'
	peers=${HLM_PEERS:-$HOME/.cache/hlm-peers}
	src=""
	for t in "$peers/llama.cpp" "${HLM_REFS:-$HOME/.cache/hlm-refs}/llama.cpp" "$peers/libllama/src"; do
		[[ -f $t/include/llama.h ]] && { src=$t; break; }
	done
	[[ -n $src ]] || { echo "gpu.sh prepare: no llama.cpp source: run internal/libllama/build.sh once" >&2; exit 1; }
	# What the build, llama-bench, llama-server, llama-quantize and
	# gen_shapes.py need; no backend but CPU, CUDA and RPC.
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git -C "$src" rev-parse HEAD >"$tmp/COMMIT"
	git -C "$src" archive --format=tar -o "$tmp/src.tar" HEAD -- CMakeLists.txt cmake ggml src include common tools vendor \
		app scripts gguf-py licenses LICENSE models/ggml-vocab-qwen2.gguf models/ggml-vocab-llama-bpe.gguf models/ggml-vocab-phi-3.gguf \
		models/ggml-vocab-gemma-4.gguf \
		$(cd "$src/ggml/src" && for d in ggml-*/; do case $d in ggml-cpu/ | ggml-cuda/ | ggml-rpc/ | ggml-blas/) ;; *) echo ":(exclude)ggml/src/${d%/}" ;; esac; done)
	tar -rf "$tmp/src.tar" -C "$tmp" COMMIT
	{ git rev-parse --short HEAD; git diff --quiet HEAD || echo " with uncommitted changes"; } | tr -d '\n' >"$kit/HLM_COMMIT"
	xz -9 -T0 -c "$tmp/src.tar" >"$kit/llama.cpp.tar.xz"
	xz -9 -T0 -f "$kit/bin/"*
	du -sh "$kit"
	exit 0
fi

steps=${*:-build files determinism serve binding capacity serverwork split}
out=${OUT:-/tmp/hlm-gpu}
mkdir -p "$out"
exec > >(tee -a "$out/report.md") 2> >(tee -a "$out/stderr.log" >&2)
log() { echo "[$(date -u +%T)] $*" >&2; }
cuda=${LIBLLAMA_CUDA:-1}
ngl=${NGL:-99}
if [[ $cuda == 1 ]]; then
	command -v nvidia-smi >/dev/null || { echo "gpu.sh: no nvidia-smi: this script needs an NVIDIA GPU (LIBLLAMA_CUDA=0 NGL=0 rehearses it on a CPU)" >&2; exit 1; }
	export PATH=$PATH:/usr/local/cuda/bin
	command -v nvcc >/dev/null || { echo "gpu.sh: no nvcc: install the CUDA toolkit" >&2; exit 1; }
fi
dur=${DURATION:-15s}
devices=${DEVICES:-1 8 32 64}
shapes=${SHAPES:-qwen3-0.6b llama3.2-1b llama3.1-8b}
capshapes=${CAP_SHAPES:-}
capsys=${CAP_SYSTEMS:-hlm direct llama-server}
# As bench/llamacpp.sh: llama.cpp's threads sleep when idle, in every
# process (hlm's backend included), so that no engine's spinning threads
# take the cores another engine's need.
poll=${POLL:-0}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY-PASSIVE}
threads=${THREADS:-$(nproc)}
work=${HLM_PERF_WORK:-/tmp/hlm-perf}/families
mkdir -p "$work"

# The binaries: Go's, or the kit's.
kit=${HLM_GPU_KIT:-}
if [[ -n $kit ]]; then
	kit=$(cd "$kit" && pwd)
	export HLM_PEERS=${HLM_PEERS:-/tmp/hlm-peers}
	gobin=$HLM_PEERS/gobin
	# Unpacked again when the kit changed (a machine kept warm between
	# calls keeps $HLM_PEERS, and a kit rebuilt here must not run stale).
	stamp=$(cksum "$kit/bin/"*.xz "$kit/llama.cpp.tar.xz" | cksum)
	if [[ ! -x $gobin/hlm || $(cat "$gobin/.stamp" 2>/dev/null) != "$stamp" ]]; then
		rm -rf "$gobin"
		mkdir -p "$gobin" "$HLM_PEERS/llama.cpp"
		# Python's lzma, not xz: the GPU machine's image need not have xz.
		python3 - "$kit" "$gobin" "$HLM_PEERS/llama.cpp" <<-'EOF'
			import lzma, os, shutil, sys, tarfile
			kit, gobin, src = sys.argv[1:]
			for f in os.listdir(f"{kit}/bin"):
			    with lzma.open(f"{kit}/bin/{f}") as r, open(f"{gobin}/{f[:-3]}", "wb") as w:
			        shutil.copyfileobj(r, w)
			    os.chmod(f"{gobin}/{f[:-3]}", 0o755)
			with tarfile.open(f"{kit}/llama.cpp.tar.xz") as t:
			    t.extractall(src)
		EOF
		echo "$stamp" >"$gobin/.stamp"
	fi
else
	gobin=${HLM_PEERS:-$HOME/.cache/hlm-peers}/gobin
	mkdir -p "$gobin"
	build_bins "$gobin"
fi
# gotest PKG ARGS...: a package's test binary, run in its directory as go test does.
gotest() { local pkg=$1; shift; (cd "$root/$pkg" && "$gobin/$(basename "$pkg").test" "$@"); }

# The files: FILES names them (e.g. "qwen3-0.6b-q8_0 llama3.2-1b-q4_k_m"),
# else every shape of SHAPES at Q8_0 and Q4_K_M (no 8B Q8_0).
files=()
if [[ -n ${FILES:-} ]]; then
	for f in $FILES; do files+=("$work/$f.gguf"); done
else
	for s in $shapes; do
		for t in q8_0 q4_k_m; do
			[[ $s == llama3.1-8b && $t == q8_0 ]] && continue
			files+=("$work/$s-$t.gguf")
		done
	done
fi
# Python with numpy, for gen_shapes.py: PYTHON, else the first that has it.
py=${PYTHON:-}
if [[ -z $py ]]; then
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }
	done
fi
# write_f16 SRC: the F16 file of each shape with a missing file, with
# gen_shapes.py and SRC's gguf-py (numpy, one core: it runs beside the build).
write_f16() {
	local g n f16
	for g in "${files[@]}"; do
		[[ -f $g ]] && continue
		n=$(basename "$g" .gguf)
		f16=$work/${n%-*}-f16.gguf
		[[ -f $f16 ]] && continue
		log "   writing $f16"
		PYTHONPATH=$1/gguf-py "${py:-python3}" "$root/bench/families/gen_shapes.py" "${n%-*}" "$f16.tmp" >&2 && mv "$f16.tmp" "$f16" ||
			log "   gen_shapes.py ${n%-*} failed"
	done
}

echo "# bench/gpu.sh $steps — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
if [[ $cuda == 1 ]]; then
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/- GPU: /'
	echo "- CUDA: $(nvcc --version | grep -o 'release [0-9.]*')"
fi
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs) (family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs), model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2 | xargs)), $(nproc) cores; $threads threads for every engine; hlm's kernel level $("$gobin/hlm" bench -p 1 -n 0 -r 1 -t 1 2>/dev/null | sed -n 's/^kernels: //p')"
echo "- hlm $(cat "${kit:-/nonexistent}/HLM_COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo '?'); llama.cpp build options: ${LIBLLAMA_CMAKE_ARGS:-defaults}"
echo

# The library comes first, whatever the steps (at once when it is built);
# the F16 files of the files step are written beside its build.
srcdir=""
if [[ -n $kit ]]; then
	srcdir=$HLM_PEERS/llama.cpp
else
	for t in "${HLM_PEERS:-$HOME/.cache/hlm-peers}/llama.cpp" "${HLM_REFS:-$HOME/.cache/hlm-refs}/llama.cpp"; do
		[[ -f $t/gguf-py/gguf/__init__.py ]] && { srcdir=$t; break; }
	done
fi
f16pid=""
if [[ " $steps " == *" files "* && -n $srcdir ]]; then
	write_f16 "$srcdir" &
	f16pid=$!
fi
log "build: libllama$([[ $cuda == 1 ]] && echo ' with CUDA (CUDA kernels for every quantization type: minutes)')"
start=$(date +%s)
lib=$(LIBLLAMA_CUDA=$cuda LIBLLAMA_TARGETS="llama-bench llama-server llama-quantize ggml-rpc-server" internal/libllama/build.sh)
bin=$(dirname "$lib")
export HLM_LLAMA_LIB=$lib
[[ -x $gobin/rounds ]] || g++ -O2 -std=c++17 -I"$bin/include" bench/llamacpp/rounds.cpp -L"$bin" -lllama -lggml -lggml-base -Wl,-rpath,"$bin" -o "$gobin/rounds"
echo "- libllama: $lib (ready in $(($(date +%s) - start)) s)"
# What the library offers, as hlm opens it (a CUDA build lists the GPUs).
"$gobin/hlm" version --llama 2>&1 | sed -n 's/^  \(version\|devices\): /- libllama \1: /p' || true
echo

step_build() { :; }

step_files() {
	log "files: ${files[*]##*/}"
	[[ -n $f16pid ]] && { wait "$f16pid" || true; }
	write_f16 "$bin/../../src"
	local g n
	for g in "${files[@]}"; do
		[[ -f $g ]] && continue
		n=$(basename "$g" .gguf)
		log "   llama-quantize $n"
		"$bin/llama-quantize" "$work/${n%-*}-f16.gguf" "$g" "$(tr a-z A-Z <<<"${n##*-}")" "$threads" >"$work/$n.quantize.log" 2>&1 ||
			{ log "   llama-quantize $n failed: $(tail -n 3 "$work/$n.quantize.log")"; rm -f "$g"; }
	done
}

# testlog NAME: a test binary's verbose output, whole in $out/NAME.log, and
# here its results, with the log lines (what a test measured) unless
# TESTLOG=results.
testlog() {
	local re='^(\s*--- |\s+\S+_test\.go:|ok|FAIL|PASS|panic)'
	[[ ${TESTLOG:-} == results ]] && re='^(--- |ok|FAIL|PASS|panic)'
	tee "$out/$1.log" | grep -E "$re" || true
}

step_determinism() {
	log "determinism: model/llamacpp's tests, every layer on the GPU"
	echo "## Determinism (model/llamacpp's tests; their specs put every layer on the GPU)"
	echo
	echo '```'
	HLM_TEST_NGL=$ngl gotest model/llamacpp -test.count=1 -test.v -test.timeout="${DET_TIMEOUT:-240s}" \
		-test.run 'TestDeterminism|TestFamilies|TestMoreSessionsThanSlots|TestDroppedSessionFreesItsSequence' 2>&1 | testlog determinism || true
	echo '```'
	echo
}

step_serve() {
	log "serve: hlm serve on the llama.cpp backend end to end (losslessness, every method)"
	echo "## hlm serve on the llama.cpp backend (cloud's TestLlamaCpp*)"
	echo
	echo '```'
	HLM_TEST_NGL=$ngl gotest cloud -test.count=1 -test.v -test.timeout="${DET_TIMEOUT:-240s}" -test.run 'TestLlamaCpp' 2>&1 | TESTLOG=results testlog serve || true
	echo '```'
	echo
}

IFS=, read -r -a bindtests <<<"${BIND_TESTS:--p 0 -n 128,-p 8 -n 0,-p 512 -n 0}"
step_binding() {
	log "binding: hlm bench vs llama-bench"
	# -fa 0: the backend's default (flash attention makes a token's logits
	# depend on how its prefix was prefilled: model/llamacpp's doc), which
	# llama-bench's default (auto: on where the backend has the kernels)
	# is not; like against like.
	echo "## The binding: hlm bench (llama.cpp backend, ngl=$ngl) vs llama-bench -ngl $ngl -fa 0"
	echo
	echo "| file | test | llama-bench t/s | hlm bench t/s | ratio |"
	echo "|---|---|---:|---:|---:|"
	local g test a b
	for g in "${files[@]}"; do
		[[ -f $g ]] || { log "   no $g: run the files step"; continue; }
		for test in "${bindtests[@]}"; do
			a=$("$bin/llama-bench" -m "$g" $test -ngl "$ngl" -fa 0 -t "$threads" --poll "$poll" -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])') || a=nan
			b=$("$gobin/hlm" bench --model "$g@llama.cpp@ngl=$ngl@repack=on@c=1024" $test -t "$threads" -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])') || b=nan
			python3 -c "a,b=float('$a'),float('$b'); print(f'| $(basename "$g") | ${test// /} | {a:.1f} | {b:.1f} | {b/a:.3f} |')"
		done
	done
	echo
}

# healthy URL: whether llama-server answers (curl, else Python's urllib).
healthy() {
	if command -v curl >/dev/null; then
		curl -fs "$1" >/dev/null 2>&1
	else
		python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "$1" >/dev/null 2>&1
	fi
}

step_capacity() {
	log "capacity: N = $devices, ${capshapes:-every file}"
	local jsonl=$out/capacity.jsonl s g n port pid
	for g in "${files[@]}"; do
		[[ -f $g ]] || continue
		if [[ -n $capshapes ]]; then
			local want=0
			for s in $capshapes; do [[ $(basename "$g") == $s-* ]] && want=1; done
			((want)) || continue
		fi
		for n in $devices; do
			log "   $(basename "$g") N=$n"
			prof=()
			[[ -n ${CAP_PROFILE:-} ]] && prof=(--cpuprofile "$out/serve-$(basename "$g" .gguf)-N$n.prof")
			"$gobin/capacity" serve --llm "$g@llama.cpp@ngl=$ngl@np=$n@c=512@ub=$((n * 5 > 512 ? n * 5 : 512))" --devices "$n" --duration "$dur" --ctx 512 --threads "$threads" "${prof[@]}" >>"$jsonl" || true
			[[ $capsys == *direct* ]] && { "$gobin/rounds" "$g" "$n" 4 "${dur%s}" 32 "$threads" 512 >>"$jsonl" || true; }
			[[ $capsys == *llama-server* ]] || continue
			port=$((18000 + RANDOM % 1000))
			"$bin/llama-server" -m "$g" -ngl "$ngl" -t "$threads" -tb "$threads" --poll "$poll" -np "$n" -c $((n * 512)) --host 127.0.0.1 --port "$port" --no-webui >"$out/llama-server.log" 2>&1 &
			pid=$!
			for _ in $(seq 480); do healthy "http://127.0.0.1:$port/health" && break; sleep 0.25; done
			"$gobin/capacity" llama-server --url "http://127.0.0.1:$port" --devices "$n" --duration "$dur" --model "$(basename "$g" .gguf)" --pid "$pid" --vocab-from "$g" >>"$jsonl" || true
			kill "$pid"
			wait "$pid" 2>/dev/null || true
		done
	done
	echo "## Server capacity (ngl=$ngl)"
	"$gobin/capacity" report "$jsonl"
	echo
}

step_serverwork() {
	log "serverwork: cloud.BenchmarkServerWork, $threads threads"
	echo "## hlm serve's own work per verification (cloud.BenchmarkServerWork, $threads threads, no GPU)"
	echo
	echo '```'
	gotest cloud -test.run '^$' -test.bench ServerWork -test.benchtime=6x -test.count=2 -test.cpu "$threads" 2>&1 | grep -E '^(Benchmark|cpu:)' || true
	echo '```'
	echo
	echo "## One coupled race at Qwen's vocabulary, one thread, each kernel level (speculative.BenchmarkRaceLogits)"
	echo
	echo '```'
	gotest speculative -test.run '^$' -test.bench 'RaceLogits/vocab=151936' -test.benchtime=100x 2>&1 | grep -E '^(Benchmark|cpu:)' || true
	echo '```'
	echo
}

step_split() {
	[[ $cuda == 1 ]] || return 0
	local gpus g sm
	gpus=$(nvidia-smi -L | wc -l)
	if ((gpus < 2)); then
		log "split: one GPU, nothing to split"
		return 0
	fi
	log "split: $gpus GPUs"
	echo "## Several GPUs (hlm bench, llama.cpp backend)"
	echo
	for g in "${files[@]}"; do
		[[ -f $g ]] || continue
		for sm in layer row; do
			echo "- $(basename "$g") sm=$sm: $("$gobin/hlm" bench --model "$g@llama.cpp@ngl=99@sm=$sm@ts=1,1@c=1024" -p 8 -n 128 -r 3 2>/dev/null | grep -E '^\|.*(pp8|tg128)' | tr '\n' ' ')"
		done
	done
}

for s in $steps; do
	declare -F "step_$s" >/dev/null || { echo "gpu.sh: no step $s (build files determinism serve binding capacity serverwork split)" >&2; exit 2; }
done
for s in $steps; do
	"step_$s"
done
log "done: $out/report.md"
