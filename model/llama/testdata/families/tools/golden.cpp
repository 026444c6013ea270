// golden: reference logits of a GGUF model from llama.cpp, in hlm's golden layout.
//
//   usage: golden MODEL.gguf OUT.bin N_GREEDY ID0,ID1,...
//
// Loads MODEL with llama.cpp's public API (llama.h), evaluates the prompt ids in
// one batch with logits requested for every position, then decodes N_GREEDY
// tokens greedily one at a time (argmax of the last logits, lowest id on ties;
// end-of-generation tokens do not stop it). Writes, little-endian:
//
//   int32 n, int32 V, n x int32 prompt ids, n x V float32 logits
//   (row i = logits after feeding token i at position i), int32 g, g x int32 ids
//
// which is the layout of shared/golden/stories260K_golden.bin.
//
// Settings chosen for reproducible, full-precision numbers: CPU only, 1 thread,
// flash attention off, F32 K/V cache (the default F16 cache would round K and V),
// full-size sliding-window cache.
#include "llama.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int argmax(const float * v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) {
        if (v[i] > v[best]) {
            best = i;
        }
    }
    return best;
}

static std::vector<llama_token> parse_ids(const char * s) {
    std::vector<llama_token> ids;
    while (*s) {
        char * end = nullptr;
        ids.push_back((llama_token) strtol(s, &end, 10));
        if (end == s) {
            break;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return ids;
}

static void put_i32(FILE * f, int32_t v) { fwrite(&v, sizeof v, 1, f); }  // x86-64 and arm64 are little-endian

int main(int argc, char ** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL.gguf OUT.bin N_GREEDY ID0,ID1,...\n", argv[0]);
        return 2;
    }
    const int n_greedy = atoi(argv[3]);
    std::vector<llama_token> prompt = parse_ids(argv[4]);
    const int n = (int) prompt.size();

    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        fprintf(stderr, "golden: cannot load %s\n", argv[1]);
        return 1;
    }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 128;
    cp.n_batch = 128;
    cp.n_ubatch = 128;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.swa_full = true;
    cp.no_perf = true;
    if (n + n_greedy > (int) cp.n_ctx) {
        fprintf(stderr, "golden: %d + %d tokens exceed the context of %u\n", n, n_greedy, cp.n_ctx);
        return 1;
    }
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "golden: cannot create a context\n");
        return 1;
    }

    llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        batch.token[i] = prompt[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    if (llama_decode(ctx, batch) != 0) {
        fprintf(stderr, "golden: prompt decode failed\n");
        return 1;
    }
    std::vector<float> logits((size_t) n * n_vocab);
    for (int i = 0; i < n; i++) {
        memcpy(&logits[(size_t) i * n_vocab], llama_get_logits_ith(ctx, i), sizeof(float) * n_vocab);
    }

    std::vector<llama_token> gen;
    llama_token next = argmax(&logits[(size_t) (n - 1) * n_vocab], n_vocab);
    for (int k = 0; k < n_greedy; k++) {
        gen.push_back(next);
        if (k + 1 == n_greedy) {
            break;
        }
        batch.token[0] = next;
        batch.pos[0] = n + k;
        batch.n_seq_id[0] = 1;
        batch.seq_id[0][0] = 0;
        batch.logits[0] = 1;
        batch.n_tokens = 1;
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "golden: decode failed at step %d\n", k);
            return 1;
        }
        next = argmax(llama_get_logits_ith(ctx, 0), n_vocab);
    }

    FILE * f = fopen(argv[2], "wb");
    if (!f) {
        fprintf(stderr, "golden: cannot create %s\n", argv[2]);
        return 1;
    }
    put_i32(f, n);
    put_i32(f, n_vocab);
    for (llama_token t : prompt) {
        put_i32(f, t);
    }
    fwrite(logits.data(), sizeof(float), logits.size(), f);
    put_i32(f, (int32_t) gen.size());
    for (llama_token t : gen) {
        put_i32(f, t);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "golden: write failed\n");
        return 1;
    }

    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
