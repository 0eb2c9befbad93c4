#!/bin/sh
# tests/compile.sh CC CXX - the compile tests of STYLE §9: the generated header under C11 and
# C++, CTORCH_STATIC, each CTORCH_NO_* flag, custom allocator hooks and double inclusion,
# warning-free (-Werror) with the given compilers. Prints one line per configuration.
cc=${1:-cc}
cxx=${2:-c++}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
check() { # name compiler flags... < source: compiles to an object
    name=$1; comp=$2; shift 2
    ext=c; case "$comp" in *++*) ext=cpp;; esac
    cat > "$dir/t.$ext"
    if $comp "$@" -Wall -Wextra -Werror -I"$root" -c "$dir/t.$ext" -o "$dir/t.o" 2> "$dir/err"; then
        echo "compile ok: $name"
    else
        echo "compile FAILED: $name"; sed 's/^/    /' "$dir/err" | head -20; echo "$name" >> "$dir/failed"
    fi
}
run() { # name compiler flags... < source: compiles, links and runs a program (exit 0 = ok)
    name=$1; comp=$2; shift 2
    cat > "$dir/r.c"
    if ! $comp "$@" -Wall -Wextra -Werror -I"$root" "$dir/r.c" -o "$dir/r" -lm 2> "$dir/err"; then
        echo "compile FAILED: $name"; sed 's/^/    /' "$dir/err" | head -20; echo "$name" >> "$dir/failed"
    elif "$dir/r" > "$dir/out" 2>&1; then
        echo "run ok: $name"
    else
        echo "run FAILED: $name"; sed 's/^/    /' "$dir/out" | head -20; echo "$name" >> "$dir/failed"
    fi
}
impl='#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
int main(void) { ct_scope_begin(); ct_scope_end(); return 0; }'
for c in "$cc" clang gcc; do
    command -v "$c" > /dev/null || continue
    echo "$impl" | check "$c c11" "$c" -std=c11 -Wpedantic
    echo "$impl" | check "$c c11 -fopenmp" "$c" -std=c11 -Wpedantic -fopenmp
    echo "$impl" | check "$c c11 -march=native -O2" "$c" -std=c11 -Wpedantic -march=native -O2
    echo "$impl" | check "$c c11 -mavx2 -mfma -O2" "$c" -std=c11 -Wpedantic -mavx2 -mfma -O2
done
for c in "$cxx" clang++ g++; do
    command -v "$c" > /dev/null || continue
    echo "$impl" | check "$c c++17" "$c" -std=c++17
    echo "$impl" | check "$c c++17 -march=native -O2" "$c" -std=c++17 -march=native -O2
done
printf '#define CTORCH_STATIC\n%s\n' "$impl" | check "CTORCH_STATIC" "$cc" -std=c11 -Wpedantic
for flag in CTORCH_NO_STDIO CTORCH_NO_THREADS CTORCH_NO_AUTOGRAD CTORCH_NO_SIMD CTORCH_NO_MMAP CTORCH_DEBUG; do
    printf '#define %s\n%s\n' "$flag" "$impl" | check "$flag" "$cc" -std=c11 -Wpedantic
done
run "allocator hooks" "$cc" -std=c11 -Wpedantic <<'SRC'
#include <stdio.h>
#include <stdlib.h>
static size_t mallocs, frees;
static void *my_malloc(void *ctx, size_t n) { (void)ctx; mallocs++; return malloc(n); }
static void my_free(void *ctx, void *p) { (void)ctx; if (p) { frees++; } free(p); }
#define CTORCH_MALLOC(ctx, n) my_malloc(ctx, n)
#define CTORCH_REALLOC(ctx, p, n) realloc(p, n)
#define CTORCH_FREE(ctx, p) my_free(ctx, p)
#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
int main(void)
{
    int64_t s[2] = {64, 64};
    ct_scope_begin();
    double v = ct_item(ct_sum(ct_add(ct_ones(s, 2, CT_FLOAT32), ct_ones(s, 2, CT_FLOAT32))));
    ct_scope_end();
    ct_empty_cache(); /* the cached blocks go back through CTORCH_FREE */
    if (v != 8192 || ct_error() || mallocs == 0 || frees != mallocs) {
        printf("sum %g, %zu mallocs, %zu frees, error %s\n", v, mallocs, frees,
               ct_error() ? ct_error() : "none");
        return 1;
    }
    return 0;
}
SRC
check "header included twice" "$cc" -std=c11 -Wpedantic <<'SRC'
#include "ctorch.h"
#include "ctorch.h"
#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
#include "ctorch.h"
int main(void) { return 0; }
SRC
# the checks run in pipelines (subshells), so failures are lines of a file
if [ -s "$dir/failed" ]; then
    exit 1
fi
