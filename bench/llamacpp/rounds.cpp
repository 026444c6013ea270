// rounds: the batches hlm serve gives llama.cpp, run by llama.cpp alone (no
// Go, no protocol, no verification), for bench/llamacpp.sh: N sequences in
// one context (kv_unified off, one stream each, n_ubatch 512, F16 KV cache,
// flash attention and weight repacking off, as model/llamacpp sets them),
// each prefilled with PROMPT random tokens; then rounds of one llama_decode
// of N x (L+1) tokens (the committed token and L drafts of every
// sequence), the logits of every position read, and every sequence keeping
// one new position (llama_memory_seq_rm), as random drafts are rejected. A
// sequence that reaches CTX positions starts again from a new prompt (its
// prefill not counted). Prints one JSON line as bench/capacity does.
//
//   usage: rounds MODEL.gguf N L SECONDS PROMPT THREADS CTX
#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double peak_rss_mb() {
    FILE * f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double mb = 0;
    while (fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) mb = kb / 1024.0;
    }
    fclose(f);
    return mb;
}

static void log_quiet(enum ggml_log_level level, const char * text, void *) {
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

int main(int argc, char ** argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s MODEL.gguf N L SECONDS PROMPT THREADS CTX\n", argv[0]);
        return 2;
    }
    const int n = atoi(argv[2]), L = atoi(argv[3]), prompt = atoi(argv[5]), threads = atoi(argv[6]), ctx_len = atoi(argv[7]);
    const double seconds = atof(argv[4]);
    llama_log_set(log_quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.use_extra_bufts = false;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = ctx_len * n;
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_seq_max = n;
    cp.n_outputs_max = std::max(512, n);
    cp.n_outputs_max_per_seq = 0;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.kv_unified = false;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    llama_memory_t mem = llama_get_memory(ctx);
    llama_batch batch = llama_batch_init(512, 0, 1);
    std::mt19937_64 rng(7);
    std::vector<int> len(n, 0);
    auto prefill = [&](int s) {
        llama_memory_seq_rm(mem, s, -1, -1);
        batch.n_tokens = prompt;
        for (int i = 0; i < prompt; i++) {
            batch.token[i] = rng() % vocab;
            batch.pos[i] = i;
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = s;
            batch.logits[i] = i == prompt - 1;
        }
        if (llama_decode(ctx, batch) != 0) exit(1);
        len[s] = prompt;
    };
    for (int s = 0; s < n; s++) prefill(s);
    std::vector<double> lat;
    long rounds = 0, positions = 0;
    const double start = now() + 2, deadline = start + seconds; // 2 s of warm-up
    volatile float sink = 0;
    while (now() < deadline) {
        for (int s = 0; s < n; s++) {
            if (len[s] + L + 1 >= ctx_len) prefill(s);
        }
        batch.n_tokens = 0;
        for (int s = 0; s < n; s++) {
            for (int k = 0; k <= L; k++) {
                int i = batch.n_tokens++;
                batch.token[i] = rng() % vocab;
                batch.pos[i] = len[s] + k;
                batch.n_seq_id[i] = 1;
                batch.seq_id[i][0] = s;
                batch.logits[i] = 1;
            }
        }
        const double t0 = now();
        if (llama_decode(ctx, batch) != 0) return 1;
        for (int i = 0; i < batch.n_tokens; i++) sink += llama_get_logits_ith(ctx, i)[0];
        const double t1 = now();
        for (int s = 0; s < n; s++) {
            llama_memory_seq_rm(mem, s, len[s] + 1, -1);
            len[s] += 1;
        }
        if (t0 >= start && t1 <= deadline) {
            rounds += n;
            positions += (long) n * (L + 1);
            for (int s = 0; s < n; s++) lat.push_back((t1 - t0) * 1000);
        }
    }
    std::sort(lat.begin(), lat.end());
    auto q = [&](double p) { return lat.empty() ? 0.0 : lat[std::min(lat.size() - 1, (size_t) (p * lat.size()))]; };
    std::string name = argv[1];
    name = name.substr(name.find_last_of('/') + 1);
    if (name.size() > 5 && name.substr(name.size() - 5) == ".gguf") name.resize(name.size() - 5);
    printf("{\"kind\":\"llama.cpp direct\",\"engine\":\"llama.cpp\",\"model\":\"%s\",\"devices\":%d,\"l\":%d,\"seconds\":%.1f,"
           "\"rounds\":%ld,\"positions\":%ld,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"peak_rss_mb\":%.0f}\n",
           name.c_str(), n, L, seconds, rounds, positions, q(0.5), q(0.99), peak_rss_mb());
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
