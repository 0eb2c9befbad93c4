/* examples/gpt.c - a character-level GPT trained on English text, with checkpoints and
 * sampling through a key/value cache.
 *
 * Build (one command):
 *   cc -O2 -march=native -pthread examples/gpt.c -o gpt -lm
 * Run:
 *   ./gpt [--data FILE] [--steps N] [--batch N] [--block N] [--layers N] [--heads N]
 *         [--width N] [--dropout P] [--lr X] [--warmup N] [--weight-decay X] [--grad-clip X]
 *         [--eval-every N] [--eval-batches N] [--threads N] [--seed N] [--save FILE]
 *         [--resume FILE] [--stop-after N] [--save-init FILE] [--log-steps N]
 *         [--dtype float64] [--amp bf16|fp16] [--sample N] [--prompt TEXT]
 *         [--temperature X] [--top-k N]
 *   ./gpt --generate N --checkpoint FILE [--prompt TEXT] [--temperature X] [--top-k N]
 *         [--seed N] [--threads N]
 * Data: --data FILE (any text), else Debian's fortunes (`apt-get install fortunes`: the text
 * files of /usr/share/games/fortunes concatenated in name order, not the .dat/.u8 ones), else
 * the small text shipped in data/tiny.txt. Tokens are bytes; the vocabulary is the sorted set
 * of bytes in the text (saved in checkpoints). The first 90% is trained on, the last 10%
 * validates.
 * Model (nanoGPT's): token + position embeddings, --layers pre-LayerNorm blocks (causal
 * self-attention: one Linear c_attn to q, k, v, then scaled_dot_product_attention with
 * is_causal, and the projection c_proj; an MLP c_fc (4x width), GELU, c_proj), a final
 * LayerNorm and logits through the token embedding's weight (weight tying). Weights drawn
 * N(0, 0.02) (c_proj N(0, 0.02 / sqrt(2 layers))), biases 0. Dropout (--dropout, default 0)
 * after the embeddings, on the attention weights and after each c_proj, in training only.
 * Training: batches of --batch windows of --block characters at offsets drawn by torch.randint
 * from the default generator (re-seeded with --seed once the model is built, so the offsets
 * and the dropout masks are those of torch.manual_seed(seed) followed by the same loop);
 * cross-entropy of the next character; AdamW (betas 0.9, 0.99; weight decay on the 2-D weights
 * only) with LambdaLR: linear warmup over --warmup steps, then cosine decay to lr / 10;
 * gradients clipped to norm --grad-clip. Every --eval-every steps (and at the end) the mean
 * loss over --eval-batches fixed batches of the validation text is printed, and --save FILE
 * writes a checkpoint (safetensors): the model under "model.", the optimizer under "optim.",
 * the scheduler under "sched.", the default generator's state, the step, the model's sizes and
 * the vocabulary. --resume FILE continues such a run with the losses of an uninterrupted one;
 * --stop-after N ends the run after step N (as if interrupted). --save-init FILE writes the
 * initial state_dict and --log-steps N prints the loss of each of the first N steps:
 * tools/cross_check_gpt.py trains the same model in PyTorch from them. --dtype float64 trains
 * in float64. --amp bf16 runs the forward passes and the loss under CPU autocast
 * (ct_autocast_begin: the Linear layers and attention in bfloat16, the loss in float32; the
 * parameters, gradients and AdamW stay float32); --amp fp16 the same in float16 with a
 * GradScaler (gradients unscaled before clipping, steps skipped on inf/NaN), as torch.autocast
 * + torch.amp.GradScaler.
 * Sampling (after training: --sample N characters; or --generate N from --checkpoint FILE, the
 * generator seeded with --seed): the prompt (--prompt, default a newline) is run through the
 * model once, then each new character alone, the keys and values of earlier positions kept in
 * one ct_kv_cache per layer, in inference mode. A full cache (--block positions) restarts from
 * the last --block / 2 characters. Each character: logits / temperature; with --top-k K the K
 * largest (ct_topk), softmax, ct_multinomial (the default generator), as PyTorch's code.
 * Expected output (fortunes, defaults, --threads 2; times from a busy shared machine, where a
 * step took 150 to 350 ms; samples vary):
 *   data: /usr/share/games/fortunes (2576674 characters, 114 distinct; 2319006 train, 257668
 *   validation)
 *   model: 4 layers, 4 heads, width 128, context 128: 0.82 M parameters
 *   step    200  train loss 3.0051  val loss 2.5934  lr 9.94e-04  61.8 s
 *   ...
 *   step   1400  train loss 2.0187  val loss 1.9726  lr 3.04e-04  438.9 s
 *   ...
 *   step   2000  train loss 1.9128  val loss 1.8834  lr 1.00e-04  715.1 s
 *   train step: ... ms (median of 2000 steps)
 *   sample:
 *   And Expendelates spines conne the programs.
 *   %
 *   ...
 * `make gpt-demo` trains on data/tiny.txt (original text written for ctorch, CC0) for 300
 * steps and samples from it.
 * On a terminal a progress bar (steps, loss, tokens/s) is drawn on stderr between evaluations.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty, opendir under -std=c11 */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "error: %s\n", message);
    exit(1);
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "error: %s%s\n", what, detail);
    exit(1);
}

/* ---- options ---------------------------------------------------------------------------- */
typedef struct options {
    const char *data, *save, *resume, *save_init, *dtype, *checkpoint, *prompt, *amp;
    int steps, batch, block, layers, heads, width, warmup, eval_every, eval_batches, threads;
    int stop_after, log_steps, sample, generate, top_k;
    double dropout, lr, weight_decay, grad_clip, temperature;
    unsigned long long seed;
} options;

typedef struct option_spec {
    const char *name;
    char kind; /* 's' string, 'i' int, 'd' double, 'u' unsigned long long */
    void *dst;
} option_spec;

static void usage(void)
{
    fprintf(stderr, "usage: gpt [--data FILE] [--steps N] [--batch N] [--block N] [--layers N] "
                    "[--heads N] [--width N] [--dropout P] [--lr X] [--warmup N] "
                    "[--weight-decay X] [--grad-clip X] [--eval-every N] [--eval-batches N] "
                    "[--threads N] [--seed N] [--save FILE] [--resume FILE] [--stop-after N] "
                    "[--save-init FILE] [--log-steps N] [--dtype float32|float64] "
                    "[--amp bf16|fp16] [--sample N] [--prompt TEXT] [--temperature X] [--top-k N]\n"
                    "       gpt --generate N --checkpoint FILE [--prompt TEXT] "
                    "[--temperature X] [--top-k N] [--seed N] [--threads N]\n");
    exit(2);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, NULL, NULL, NULL, "float32", NULL, "\n", NULL, 2000, 16, 128, 4, 4, 128, 100,
                 200, 20, 0, 0, 0, 500, 0, 0, 0.0, 1e-3, 0.1, 1.0, 1.0, 1337};
    const option_spec spec[] = {
        {"--data", 's', &o.data}, {"--save", 's', &o.save}, {"--resume", 's', &o.resume},
        {"--save-init", 's', &o.save_init}, {"--dtype", 's', &o.dtype},
        {"--checkpoint", 's', &o.checkpoint}, {"--prompt", 's', &o.prompt}, {"--amp", 's', &o.amp},
        {"--steps", 'i', &o.steps}, {"--batch", 'i', &o.batch}, {"--block", 'i', &o.block},
        {"--layers", 'i', &o.layers}, {"--heads", 'i', &o.heads}, {"--width", 'i', &o.width},
        {"--warmup", 'i', &o.warmup}, {"--eval-every", 'i', &o.eval_every},
        {"--eval-batches", 'i', &o.eval_batches}, {"--threads", 'i', &o.threads},
        {"--stop-after", 'i', &o.stop_after}, {"--log-steps", 'i', &o.log_steps},
        {"--sample", 'i', &o.sample}, {"--generate", 'i', &o.generate},
        {"--top-k", 'i', &o.top_k}, {"--dropout", 'd', &o.dropout}, {"--lr", 'd', &o.lr},
        {"--weight-decay", 'd', &o.weight_decay}, {"--grad-clip", 'd', &o.grad_clip},
        {"--temperature", 'd', &o.temperature}, {"--seed", 'u', &o.seed}};
    const int n_spec = (int)(sizeof spec / sizeof spec[0]);
    for (int i = 1; i < argc; i += 2) {
        int k = 0;
        while (k < n_spec && strcmp(argv[i], spec[k].name)) {
            k++;
        }
        if (k == n_spec || i + 1 == argc) {
            usage();
        }
        const char *v = argv[i + 1];
        switch (spec[k].kind) {
        case 's': *(const char **)spec[k].dst = v; break;
        case 'i': *(int *)spec[k].dst = atoi(v); break;
        case 'd': *(double *)spec[k].dst = atof(v); break;
        default: *(unsigned long long *)spec[k].dst = strtoull(v, NULL, 10); break;
        }
    }
    if (o.steps < 1 || o.batch < 1 || o.block < 2 || o.layers < 1 || o.heads < 1 ||
        o.width < 1 || o.width % o.heads || o.eval_batches < 1 || o.temperature <= 0 ||
        o.dropout < 0 || o.dropout >= 1 || (o.generate > 0 && !o.checkpoint) ||
        (strcmp(o.dtype, "float32") && strcmp(o.dtype, "float64")) ||
        (o.amp && strcmp(o.amp, "bf16") && strcmp(o.amp, "fp16"))) {
        usage();
    }
    return o;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- data ------------------------------------------------------------------------------- */
typedef struct text {
    unsigned char *bytes;
    size_t n;
} text;

/* Appends the file at path to t; false when it cannot be read. */
static bool append_file(text *t, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return false;
    }
    unsigned char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        t->bytes = (unsigned char *)realloc(t->bytes, t->n + got);
        if (!t->bytes) {
            die("out of memory", "");
        }
        memcpy(t->bytes + t->n, buf, got);
        t->n += got;
    }
    fclose(f);
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir without a '.' in their name (the fortune texts, not their .dat
   indexes or .u8 links), concatenated in name order; false when there are none. */
static bool load_fortunes(text *t, const char *dir)
{
    DIR *d = opendir(dir);
    char *names[512];
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 512) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!strchr(e->d_name, '.') && lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            names[n++] = strdup(path);
        }
    }
    if (d) {
        closedir(d);
    }
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        append_file(t, names[i]);
        free(names[i]);
    }
    return t->n > 0;
}

/* --data, else the fortunes, else the shipped text; returns where the text came from. */
static const char *load_text(const char *flag, text *t)
{
    static const char *shipped[2] = {"data/tiny.txt", "../data/tiny.txt"};
    if (flag) {
        if (!append_file(t, flag) || t->n == 0) {
            die("cannot read text from ", flag);
        }
        return flag;
    }
    if (load_fortunes(t, "/usr/share/games/fortunes")) {
        return "/usr/share/games/fortunes";
    }
    for (int k = 0; k < 2; k++) {
        if (append_file(t, shipped[k]) && t->n > 0) {
            return shipped[k];
        }
    }
    die("no text found (try --data FILE)", "");
    return NULL;
}

/* The vocabulary: the sorted distinct bytes of the text, and each byte's token id. */
typedef struct vocab {
    unsigned char chars[256];
    int size;
    int id[256]; /* -1 for bytes outside the vocabulary */
} vocab;

static void vocab_index(vocab *v)
{
    for (int b = 0; b < 256; b++) {
        v->id[b] = -1;
    }
    for (int i = 0; i < v->size; i++) {
        v->id[v->chars[i]] = i;
    }
}

static vocab vocab_of(const text *t)
{
    vocab v;
    bool seen[256] = {false};
    for (size_t i = 0; i < t->n; i++) {
        seen[t->bytes[i]] = true;
    }
    v.size = 0;
    for (int b = 0; b < 256; b++) {
        if (seen[b]) {
            v.chars[v.size++] = (unsigned char)b;
        }
    }
    vocab_index(&v);
    return v;
}

/* The token ids of bytes[0..n-1] (all in the vocabulary). */
typedef struct tokens {
    int64_t *ids;
    int64_t n;
} tokens;

static tokens encode(const vocab *v, const unsigned char *bytes, int64_t n)
{
    tokens t = {(int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1)), n};
    for (int64_t i = 0; i < n; i++) {
        if (v->id[bytes[i]] < 0) {
            die("a character of the prompt is not in the vocabulary", "");
        }
        t.ids[i] = v->id[bytes[i]];
    }
    return t;
}

/* ---- model ------------------------------------------------------------------------------ */
typedef struct gpt_config {
    int64_t vocab, block, layers, heads, width;
    double dropout;
} gpt_config;

static ct_module *sub(const ct_module *m, const char *path)
{
    return ct_module_get_submodule(m, path);
}

static ct_tensor *drop(const gpt_config *c, const ct_module *m, const ct_tensor *x)
{
    return c->dropout > 0 ? ct_dropout(x, c->dropout, ct_module_is_training(m)) : (ct_tensor *)x;
}

/* Causal self-attention of x (B, T, C) -> (B, T, C). With a cache, the keys and values of x's
   positions are appended to it and the queries attend all of its positions (causally within
   x when the cache was empty: a prompt). */
static ct_tensor *attention(ct_module *attn, const ct_tensor *x, ct_kv_cache *cache)
{
    const gpt_config *c = (const gpt_config *)ct_module_user(attn);
    int64_t b = ct_size(x, 0), t = ct_size(x, 1), heads[4] = {b, t, c->heads,
                                                             c->width / c->heads};
    ct_tensor *qkv[3], *k, *v;
    ct_split(ct_linear_forward(sub(attn, "c_attn"), x), c->width, 2, qkv, 3);
    for (int i = 0; i < 3; i++) { /* (B, T, C) -> (B, H, T, D) */
        qkv[i] = ct_transpose(ct_reshape(qkv[i], heads, 4), 1, 2);
    }
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = !cache || ct_kv_cache_size(cache) == 0;
    o.dropout_p = ct_module_is_training(attn) ? c->dropout : 0.0;
    k = qkv[1];
    v = qkv[2];
    if (cache) {
        ct_kv_cache_update(cache, qkv[1], qkv[2], &k, &v);
    }
    ct_tensor *y = ct_scaled_dot_product_attention(qkv[0], k, v, NULL, &o);
    int64_t merged[3] = {b, t, c->width};
    y = ct_reshape(ct_transpose(y, 1, 2), merged, 3);
    return drop(c, attn, ct_linear_forward(sub(attn, "c_proj"), y));
}

static ct_tensor *attention_single(ct_module *attn, const ct_tensor *x)
{
    return attention(attn, x, NULL);
}

/* c_proj(gelu(c_fc(x))), then dropout. */
static ct_tensor *mlp(ct_module *m, const ct_tensor *x)
{
    const gpt_config *c = (const gpt_config *)ct_module_user(m);
    ct_tensor *h = ct_gelu(ct_linear_forward(sub(m, "c_fc"), x), CT_GELU_NONE);
    return drop(c, m, ct_linear_forward(sub(m, "c_proj"), h));
}

/* One pre-LayerNorm block: x + attn(ln_1(x)), then + mlp(ln_2(x)). */
static ct_tensor *block(ct_module *blk, const ct_tensor *x, ct_kv_cache *cache)
{
    ct_tensor *h = ct_layer_norm_forward(sub(blk, "ln_1"), x);
    x = ct_add(x, attention(sub(blk, "attn"), h, cache));
    h = ct_layer_norm_forward(sub(blk, "ln_2"), x);
    return ct_add(x, mlp(sub(blk, "mlp"), h));
}

static ct_tensor *block_single(ct_module *blk, const ct_tensor *x)
{
    return block(blk, x, NULL);
}

/* Logits (B, T, vocab) of the tokens idx (B, T) at positions pos0 .. pos0 + T - 1; caches
   (one per layer, or NULL) as attention's. */
static ct_tensor *gpt_forward(ct_module *m, const ct_tensor *idx, int64_t pos0,
                              ct_kv_cache *const *caches)
{
    const gpt_config *c = (const gpt_config *)ct_module_user(m);
    ct_module *h = sub(m, "transformer.h");
    ct_tensor *pos = ct_arange((double)pos0, (double)(pos0 + ct_size(idx, 1)), 1, CT_INT64);
    ct_tensor *x = ct_add(ct_embedding_forward(sub(m, "transformer.wte"), idx),
                          ct_embedding_forward(sub(m, "transformer.wpe"), pos));
    x = drop(c, m, x);
    for (int64_t l = 0; l < c->layers; l++) {
        x = block(ct_module_child(h, l), x, caches ? caches[l] : NULL);
    }
    x = ct_layer_norm_forward(sub(m, "transformer.ln_f"), x);
    return ct_linear(x, ct_module_get_parameter(m, "transformer.wte.weight"), NULL);
}

static ct_tensor *gpt_single(ct_module *m, const ct_tensor *idx)
{
    return gpt_forward(m, idx, 0, NULL);
}

/* A Block: ln_1, attn (c_attn, c_proj), ln_2, mlp (c_fc, c_proj), each module reading c. */
static ct_module *block_new(gpt_config *c)
{
    int64_t w = c->width;
    ct_module *blk = ct_module_new("Block", block_single, c, NULL);
    ct_module *attn = ct_module_new("CausalSelfAttention", attention_single, c, NULL);
    ct_module *ff = ct_module_new("MLP", mlp, c, NULL);
    ct_module_register_module(blk, "ln_1", ct_layer_norm_new(&w, 1, 1e-5, true, true));
    ct_module_register_module(attn, "c_attn", ct_linear_new(w, 3 * w, true));
    ct_module_register_module(attn, "c_proj", ct_linear_new(w, w, true));
    ct_module_register_module(blk, "attn", attn);
    ct_module_register_module(blk, "ln_2", ct_layer_norm_new(&w, 1, 1e-5, true, true));
    ct_module_register_module(ff, "c_fc", ct_linear_new(w, 4 * w, true));
    ct_module_register_module(ff, "c_proj", ct_linear_new(4 * w, w, true));
    ct_module_register_module(blk, "mlp", ff);
    return blk;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* nanoGPT's initialization, in named_parameters order: c_proj weights N(0, 0.02 /
   sqrt(2 layers)), the other weights of Linear and Embedding N(0, 0.02), biases 0 (LayerNorm
   keeps weight 1, bias 0). */
static void gpt_init(ct_module *m, const gpt_config *c)
{
    int64_t n = ct_module_named_parameters(m, NULL, 0, NULL, 0);
    char **names = (char **)malloc(sizeof(char *) * (size_t)n);
    ct_tensor **params = (ct_tensor **)malloc(sizeof(ct_tensor *) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        names[i] = (char *)malloc(128);
    }
    ct_module_named_parameters(m, names, 128, params, n);
    ct_no_grad_begin();
    for (int64_t i = 0; i < n; i++) {
        if (strstr(names[i], "ln_")) {
            /* LayerNorm: as constructed */
        } else if (ends_with(names[i], ".bias")) {
            ct_init_zeros_(params[i]);
        } else if (ends_with(names[i], "c_proj.weight")) {
            ct_init_normal_(params[i], 0.0, 0.02 / sqrt(2.0 * (double)c->layers), NULL);
        } else {
            ct_init_normal_(params[i], 0.0, 0.02, NULL);
        }
        free(names[i]);
    }
    ct_no_grad_end();
    free(names);
    free(params);
}

/* The model (its config owned by it), built in nanoGPT's order and initialized. */
static ct_module *gpt_new(const gpt_config *config)
{
    gpt_config *c = (gpt_config *)malloc(sizeof *c);
    *c = *config;
    ct_module *m = ct_module_new("GPT", gpt_single, c, free);
    ct_module *tr = ct_module_dict_new(), *h = ct_module_list_new();
    ct_module_dict_set(tr, "wte", ct_embedding_new(c->vocab, c->width, NULL));
    ct_module_dict_set(tr, "wpe", ct_embedding_new(c->block, c->width, NULL));
    for (int64_t l = 0; l < c->layers; l++) {
        ct_module_list_append(h, block_new(c));
    }
    ct_module_dict_set(tr, "h", h);
    ct_module_dict_set(tr, "ln_f", ct_layer_norm_new(&c->width, 1, 1e-5, true, true));
    ct_module_register_module(m, "transformer", tr);
    gpt_init(m, c);
    return m;
}

static int64_t count_parameters(const ct_module *m)
{
    ct_tensor *p[256];
    int64_t n = ct_module_parameters(m, p, 256), total = 0;
    for (int64_t i = 0; i < n && i < 256; i++) {
        total += ct_numel(p[i]);
    }
    return total;
}

/* ---- training --------------------------------------------------------------------------- */
typedef struct trainer {
    ct_module *model;
    ct_optimizer *opt;
    ct_lr_scheduler *sched;
    ct_tensor **params;
    int64_t n_params;
    const tokens *train, *val;
    int64_t batch, block, step;
    int warmup, steps, log_steps;
    double grad_clip;
    bool tty;
    ct_dtype amp;           /* autocast's dtype (--amp), CT_DTYPE_DEFAULT: off */
    ct_grad_scaler *scaler; /* enabled for --amp fp16; a pass-through otherwise */
} trainer;

/* LambdaLR's factor of step e: (e + 1) / (warmup + 1) during warmup, then cosine from 1 to
   0.1 at the last step (nanoGPT's get_lr as a factor of lr). */
static double lr_factor(int64_t e, int64_t group, void *user)
{
    const trainer *tr = (const trainer *)user;
    (void)group;
    if (e < tr->warmup) {
        return (double)(e + 1) / (double)(tr->warmup + 1);
    }
    double span = (double)(tr->steps - tr->warmup > 0 ? tr->steps - tr->warmup : 1);
    double ratio = (double)(e - tr->warmup) / span;
    double coeff = 0.5 * (1.0 + cos(3.141592653589793 * (ratio < 1 ? ratio : 1.0)));
    return 0.1 + coeff * (1.0 - 0.1);
}

/* AdamW with weight decay on the 2-D parameters (group 0) and none on the others (group 1). */
static void make_optimizer(trainer *tr, double lr, double weight_decay)
{
    int64_t n = ct_module_parameters(tr->model, NULL, 0), nd = 0, nn = 0;
    tr->params = (ct_tensor **)malloc(sizeof(ct_tensor *) * (size_t)n);
    ct_tensor **decay = (ct_tensor **)malloc(sizeof(ct_tensor *) * (size_t)n);
    ct_tensor **no_decay = (ct_tensor **)malloc(sizeof(ct_tensor *) * (size_t)n);
    tr->n_params = ct_module_parameters(tr->model, tr->params, n);
    for (int64_t i = 0; i < n; i++) {
        if (ct_dim(tr->params[i]) >= 2) {
            decay[nd++] = tr->params[i];
        } else {
            no_decay[nn++] = tr->params[i];
        }
    }
    ct_adam_opts a = ct_adamw_defaults();
    a.lr = lr;
    a.betas[1] = 0.99;
    a.weight_decay = weight_decay;
    tr->opt = ct_adamw_new(decay, nd, &a);
    a.weight_decay = 0.0;
    ct_optimizer_add_param_group(tr->opt, no_decay, nn, &a);
    tr->sched = ct_lambda_lr_new(tr->opt, lr_factor, tr);
    free(decay);
    free(no_decay);
}

/* The inputs (B, T) and targets (B, T) of the windows of data at offsets[0..B-1]. */
static void windows(const tokens *data, const int64_t *offsets, int64_t b, int64_t t,
                    ct_tensor **x, ct_tensor **y)
{
    int64_t *buf = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * b * t));
    int64_t sizes[2] = {b, t};
    for (int64_t i = 0; i < b; i++) {
        memcpy(buf + i * t, data->ids + offsets[i], sizeof(int64_t) * (size_t)t);
        memcpy(buf + (b + i) * t, data->ids + offsets[i] + 1, sizeof(int64_t) * (size_t)t);
    }
    *x = ct_tensor_from_data(buf, CT_INT64, sizes, 2);
    *y = ct_tensor_from_data(buf + b * t, CT_INT64, sizes, 2);
    free(buf);
}

/* The mean cross-entropy of the next character over (B, T). */
static ct_tensor *lm_loss(ct_module *model, const ct_tensor *x, const ct_tensor *y)
{
    ct_tensor *logits = gpt_forward(model, x, 0, NULL);
    int64_t flat[2] = {-1, ct_size(logits, 2)}, n = -1;
    return ct_cross_entropy(ct_view(logits, flat, 2), ct_view(y, &n, 1), NULL);
}

/* lm_loss, under autocast when --amp is given (the forward and the loss; backward outside). */
static ct_tensor *amp_lm_loss(const trainer *tr, const ct_tensor *x, const ct_tensor *y)
{
    if (tr->amp != CT_DTYPE_DEFAULT) {
        ct_autocast_begin(CT_CPU, tr->amp, true);
    }
    ct_tensor *loss = lm_loss(tr->model, x, y);
    if (tr->amp != CT_DTYPE_DEFAULT) {
        ct_autocast_end();
    }
    return loss;
}

/* One training step on a batch drawn as torch.randint(len - T, (B,)); returns its loss. */
static double train_step(trainer *tr)
{
    ct_scope_begin();
    ct_tensor *x, *y;
    ct_tensor *off = ct_randint(0, tr->train->n - tr->block, &tr->batch, 1, CT_INT64, NULL);
    windows(tr->train, (const int64_t *)ct_data_ptr(off), tr->batch, tr->block, &x, &y);
    ct_tensor *loss = amp_lm_loss(tr, x, y);
    ct_optimizer_zero_grad(tr->opt, true);
    ct_backward(ct_grad_scaler_scale(tr->scaler, loss), NULL, false);
    ct_grad_scaler_unscale_(tr->scaler, tr->opt);
    ct_clip_grad_norm_(tr->params, tr->n_params, tr->grad_clip, 2.0, false);
    ct_grad_scaler_step(tr->scaler, tr->opt, NULL);
    ct_grad_scaler_update(tr->scaler);
    ct_lr_scheduler_step(tr->sched);
    double l = ct_item(loss);
    ct_scope_end();
    return l;
}

/* The mean loss over n_batches fixed batches of data: window j of batch i at offset
   (i B + j) * stride, stride = (len - T - 1) / (n_batches B) (eval mode, no autograd). */
static double evaluate(const trainer *tr, const tokens *data, int n_batches)
{
    int64_t b = tr->batch, t = tr->block, stride = (data->n - t - 1) / (n_batches * b);
    int64_t *off = (int64_t *)malloc(sizeof(int64_t) * (size_t)b);
    double total = 0;
    ct_module_eval(tr->model);
    ct_no_grad_begin();
    for (int i = 0; i < n_batches; i++) {
        ct_scope_begin();
        ct_tensor *x, *y;
        for (int64_t j = 0; j < b; j++) {
            off[j] = (i * b + j) * stride;
        }
        windows(data, off, b, t, &x, &y);
        total += ct_item(amp_lm_loss(tr, x, y));
        ct_scope_end();
    }
    ct_no_grad_end();
    ct_module_train(tr->model, true);
    free(off);
    return total / n_batches;
}

static void progress(int64_t done, int64_t total, double loss, double tokens_per_s)
{
    int width = 30, bar = (int)(width * done / total);
    fprintf(stderr, "\r  [%.*s%*s] %lld/%lld  loss %.4f  %.0f tokens/s", bar,
            "##############################", width - bar, "", (long long)done,
            (long long)total, loss, tokens_per_s);
    if (done == total) {
        fprintf(stderr, "\r%*s\r", 90, "");
    }
}

/* ---- checkpoints ------------------------------------------------------------------------ */
static void save_checkpoint(const trainer *tr, const gpt_config *c, const vocab *v,
                            const char *path)
{
    ct_checkpoint_dict *ck = ct_state_dict_new();
    ct_state_dict *parts[3] = {ct_module_state_dict(tr->model), ct_optimizer_state_dict(tr->opt),
                               ct_lr_scheduler_state_dict(tr->sched)};
    const char *prefix[3] = {"model.", "optim.", "sched."};
    for (int k = 0; k < 3; k++) {
        ct_state_dict_update(ck, parts[k], prefix[k]);
        ct_state_dict_free(parts[k]);
    }
    ct_scope_begin();
    int64_t nv = v->size;
    ct_state_dict_set(ck, "rng_state", ct_get_rng_state());
    ct_state_dict_set(ck, "vocab", ct_tensor_from_data(v->chars, CT_UINT8, &nv, 1));
    ct_scope_end();
    ct_state_dict_set_int(ck, "step", tr->step);
    ct_state_dict_set_int(ck, "train.steps", tr->steps);
    ct_state_dict_set_int(ck, "train.warmup", tr->warmup);
    ct_state_dict_set_int(ck, "config.layers", c->layers);
    ct_state_dict_set_int(ck, "config.heads", c->heads);
    ct_state_dict_set_int(ck, "config.width", c->width);
    ct_state_dict_set_int(ck, "config.block", c->block);
    ct_state_dict_set_double(ck, "config.dropout", c->dropout);
    ct_checkpoint_dict_save(ck, path);
    ct_state_dict_free(ck);
}

static int64_t get_int(const ct_state_dict *ck, const char *key, const char *path)
{
    int64_t v = 0;
    if (!ct_state_dict_get_int(ck, key, &v)) {
        fprintf(stderr, "error: %s: no %s in the checkpoint\n", path, key);
        exit(1);
    }
    return v;
}

/* The model's sizes and vocabulary from a checkpoint. */
static gpt_config read_config(const ct_state_dict *ck, const char *path, vocab *v)
{
    gpt_config c;
    c.layers = get_int(ck, "config.layers", path);
    c.heads = get_int(ck, "config.heads", path);
    c.width = get_int(ck, "config.width", path);
    c.block = get_int(ck, "config.block", path);
    if (!ct_state_dict_get_double(ck, "config.dropout", &c.dropout)) {
        die("no config.dropout in the checkpoint ", path);
    }
    const ct_tensor *chars = ct_state_dict_get(ck, "vocab");
    if (!chars || ct_tensor_dtype(chars) != CT_UINT8 || ct_dim(chars) != 1 ||
        ct_numel(chars) < 1 || ct_numel(chars) > 256) {
        die("no valid vocab in the checkpoint ", path);
    }
    v->size = (int)ct_numel(chars);
    memcpy(v->chars, ct_data_ptr(chars), (size_t)v->size);
    vocab_index(v);
    c.vocab = v->size;
    return c;
}

/* Restores the training state save_checkpoint wrote. */
static void load_checkpoint(trainer *tr, const ct_state_dict *ck, const char *path)
{
    ct_state_dict *parts[3] = {ct_state_dict_select(ck, "model."),
                               ct_state_dict_select(ck, "optim."),
                               ct_state_dict_select(ck, "sched.")};
    ct_module_load_state_dict(tr->model, parts[0], true, NULL);
    ct_optimizer_load_state_dict(tr->opt, parts[1]);
    ct_lr_scheduler_load_state_dict(tr->sched, parts[2]);
    ct_set_rng_state(ct_state_dict_get(ck, "rng_state"));
    tr->step = get_int(ck, "step", path);
    tr->steps = (int)get_int(ck, "train.steps", path); /* the schedule of the run resumed */
    tr->warmup = (int)get_int(ck, "train.warmup", path);
    for (int k = 0; k < 3; k++) {
        ct_state_dict_free(parts[k]);
    }
}

/* ---- sampling --------------------------------------------------------------------------- */
/* A token drawn from logits (vocab): logits / temperature, the top_k largest (0: all),
   softmax, one multinomial draw from the default generator. */
static int64_t sample_token(const ct_tensor *logits, double temperature, int top_k)
{
    ct_tensor *scaled = ct_div_scalar(logits, temperature), *values, *indices = NULL;
    values = scaled;
    if (top_k > 0 && top_k < ct_size(logits, 0)) {
        ct_topk(scaled, top_k, -1, true, true, &values, &indices);
    }
    ct_tensor *probs = ct_softmax(values, -1);
    int64_t j = ct_item_int64(ct_multinomial(probs, 1, false, NULL));
    return indices ? ((const int64_t *)ct_data_ptr(ct_contiguous(indices)))[j] : j;
}

/* Prints n characters sampled after prompt with a KV cache per layer (eval mode, no
   autograd); returns the tokens per second. */
static double generate(ct_module *model, const vocab *v, const char *prompt, int n,
                       double temperature, int top_k, FILE *out)
{
    const gpt_config *c = (const gpt_config *)ct_module_user(model);
    ct_dtype dt = ct_tensor_dtype(ct_module_get_parameter(model, "transformer.wte.weight"));
    tokens p = encode(v, (const unsigned char *)prompt, (int64_t)strlen(prompt));
    int64_t cap = p.n + n, len = p.n, keep = c->block / 2;
    int64_t *seq = (int64_t *)malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
    ct_kv_cache **caches = (ct_kv_cache **)malloc(sizeof(ct_kv_cache *) * (size_t)c->layers);
    memcpy(seq, p.ids, sizeof(int64_t) * (size_t)p.n);
    free(p.ids);
    for (int64_t l = 0; l < c->layers; l++) {
        caches[l] = ct_kv_cache_new(1, c->block, c->heads, c->width / c->heads, dt);
    }
    int64_t start = len > c->block ? len - c->block : 0, pos0 = 0; /* the prompt's last T */
    ct_module_eval(model);
    ct_inference_mode_begin();
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        ct_scope_begin();
        int64_t sizes[2] = {1, len - start};
        ct_tensor *idx = ct_tensor_from_data(seq + start, CT_INT64, sizes, 2);
        ct_tensor *logits = gpt_forward(model, idx, pos0, caches);
        seq[len++] = sample_token(ct_select(ct_select(logits, 0, 0), 0, sizes[1] - 1),
                                  temperature, top_k);
        fputc(v->chars[seq[len - 1]], out);
        if (ct_kv_cache_size(caches[0]) == c->block) { /* full: restart from the last T/2 */
            for (int64_t l = 0; l < c->layers; l++) {
                ct_kv_cache_reset(caches[l]);
            }
            start = len - keep;
            pos0 = 0;
        } else {
            start = len - 1;
            pos0 = ct_kv_cache_size(caches[0]);
        }
        ct_scope_end();
    }
    double secs = now_s() - t0;
    ct_inference_mode_end();
    fputc('\n', out);
    for (int64_t l = 0; l < c->layers; l++) {
        ct_kv_cache_free(caches[l]);
    }
    free(caches);
    free(seq);
    return n / (secs > 0 ? secs : 1e-9);
}

/* --generate N --checkpoint FILE */
static void generate_from_checkpoint(const options *o)
{
    ct_checkpoint_dict *ck = ct_checkpoint_dict_load(o->checkpoint);
    vocab v;
    gpt_config c = read_config(ck, o->checkpoint, &v);
    ct_module *model = gpt_new(&c);
    ct_state_dict *sd = ct_state_dict_select(ck, "model.");
    ct_module_load_state_dict(model, sd, true, NULL);
    ct_module_to(model, ct_tensor_dtype(ct_state_dict_get(sd, "transformer.wte.weight")));
    ct_state_dict_free(sd);
    ct_state_dict_free(ck);
    ct_manual_seed(o->seed);
    fputs(o->prompt, stdout);
    double rate = generate(model, &v, o->prompt, o->generate, o->temperature, o->top_k, stdout);
    fprintf(stderr, "generated %d characters: %.1f tokens/s\n", o->generate, rate);
    ct_module_free(model);
}

/* ---- main ------------------------------------------------------------------------------- */
static void report_data(const char *from, const text *t, const vocab *v, const tokens *train,
                        const tokens *val)
{
    printf("data: %s (%zu characters, %d distinct; %lld train, %lld validation)\n", from, t->n,
           v->size, (long long)train->n, (long long)val->n);
}

/* One evaluation line (and the checkpoint); returns the validation loss. */
static double eval_report(trainer *tr, const options *o, const gpt_config *c, const vocab *v,
                          double train_loss, double t_start)
{
    double val = evaluate(tr, tr->val, o->eval_batches);
    printf("step %6lld  train loss %.4f  val loss %.4f  lr %.2e  %.1f s\n", (long long)tr->step,
           train_loss, val, ct_optimizer_get_lr(tr->opt, 0), now_s() - t_start);
    fflush(stdout);
    if (o->save) {
        save_checkpoint(tr, c, v, o->save);
    }
    return val;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void train(trainer *tr, const options *o, const gpt_config *c, const vocab *v)
{
    int last = o->stop_after > 0 && o->stop_after < tr->steps ? o->stop_after : tr->steps;
    int every = o->eval_every > 0 ? o->eval_every : tr->steps;
    double t_start = now_s(), t_train = 0, loss_sum = 0;
    double *times = (double *)malloc(sizeof(double) * (size_t)(last + 1));
    int64_t first = tr->step, since = 0;
    ct_module_train(tr->model, true);
    while (tr->step < last) {
        double t0 = now_s(), l = train_step(tr);
        times[tr->step - first] = now_s() - t0;
        t_train += times[tr->step - first];
        tr->step++;
        loss_sum += l;
        since++;
        if (tr->step <= tr->log_steps) {
            printf("step %lld loss %.17g\n", (long long)tr->step, l);
        }
        if (tr->tty) {
            progress((tr->step - 1) % every + 1, every, l,
                     (double)(tr->batch * tr->block * (tr->step - first)) / t_train);
        }
        if (tr->step % every == 0 || tr->step == last) {
            eval_report(tr, o, c, v, loss_sum / (double)since, t_start);
            loss_sum = 0;
            since = 0;
        }
    }
    int64_t n = tr->step - first;
    if (n > 0) {
        qsort(times, (size_t)n, sizeof *times, cmp_double);
        printf("train step: %.2f ms (median of %lld steps)\n", 1e3 * times[n / 2], (long long)n);
    }
    free(times);
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    ct_set_error_handler(die_on_error, NULL);
    if (o.threads > 0) {
        ct_set_num_threads(o.threads);
    }
    if (o.generate > 0) {
        generate_from_checkpoint(&o);
        return 0;
    }
    text t = {NULL, 0};
    const char *from = load_text(o.data, &t);
    vocab v = vocab_of(&t);
    tokens all = encode(&v, t.bytes, (int64_t)t.n);
    int64_t n_train = all.n * 9 / 10;
    tokens train_set = {all.ids, n_train}, val_set = {all.ids + n_train, all.n - n_train};
    if (val_set.n <= o.block + 1 || n_train <= o.block) {
        die("the text is too short for the context length", "");
    }
    report_data(from, &t, &v, &train_set, &val_set);

    ct_checkpoint_dict *ck = o.resume ? ct_checkpoint_dict_load(o.resume) : NULL;
    vocab saved;
    gpt_config c = {v.size, o.block, o.layers, o.heads, o.width, o.dropout};
    if (ck) {
        c = read_config(ck, o.resume, &saved);
        if (saved.size != v.size || memcmp(saved.chars, v.chars, (size_t)v.size)) {
            die("the checkpoint's vocabulary differs from the text's: ", o.resume);
        }
    }
    ct_manual_seed(o.seed);
    ct_module *model = gpt_new(&c);
    if (!strcmp(o.dtype, "float64")) {
        ct_module_to(model, CT_FLOAT64);
    }
    printf("model: %lld layers, %lld heads, width %lld, context %lld: %.2f M parameters\n",
           (long long)c.layers, (long long)c.heads, (long long)c.width, (long long)c.block,
           1e-6 * (double)count_parameters(model));
    if (o.save_init && ct_module_save(model, o.save_init) != CT_OK) {
        exit(1);
    }
    trainer tr = {model, NULL, NULL, NULL, 0, &train_set, &val_set, o.batch, c.block, 0,
                  o.warmup, o.steps, o.log_steps, o.grad_clip, isatty(2) != 0,
                  !o.amp ? CT_DTYPE_DEFAULT : !strcmp(o.amp, "bf16") ? CT_BFLOAT16 : CT_FLOAT16,
                  NULL};
    ct_grad_scaler_opts go = ct_grad_scaler_defaults();
    go.enabled = tr.amp == CT_FLOAT16;
    tr.scaler = ct_grad_scaler_new(&go);
    make_optimizer(&tr, o.lr, o.weight_decay);
    ct_manual_seed(o.seed); /* the batches and dropout masks: torch.manual_seed(seed), loop */
    if (ck) {
        load_checkpoint(&tr, ck, o.resume);
        printf("resumed from %s after step %lld\n", o.resume, (long long)tr.step);
        ct_state_dict_free(ck);
    }
    train(&tr, &o, &c, &v);
    if (o.sample > 0) {
        printf("sample:\n%s", o.prompt);
        double rate = generate(model, &v, o.prompt, o.sample, o.temperature, o.top_k, stdout);
        printf("generation: %.1f tokens/s\n", rate);
    }
    ct_grad_scaler_free(tr.scaler);
    ct_lr_scheduler_free(tr.sched);
    ct_optimizer_free(tr.opt);
    ct_module_free(model);
    free(tr.params);
    free(all.ids);
    free(t.bytes);
    return 0;
}
