#!/bin/sh
# tests/compile.sh CC CXX - the compile tests of STYLE §9: the generated header under C11 and
# C++, CTORCH_STATIC, each CTORCH_NO_* flag, custom allocator hooks and double inclusion,
# warning-free (-Werror) with the given compilers. Prints one line per configuration.
cc=${1:-cc}
cxx=${2:-c++}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
fail=0
check() { # name compiler flags... < source
    name=$1; comp=$2; shift 2
    ext=c; case "$comp" in *++*) ext=cpp;; esac
    cat > "$dir/t.$ext"
    if $comp "$@" -Wall -Wextra -Werror -I"$root" -c "$dir/t.$ext" -o "$dir/t.o" 2> "$dir/err"; then
        echo "compile ok: $name"
    else
        echo "compile FAILED: $name"; sed 's/^/    /' "$dir/err" | head -20; fail=1
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
for flag in CTORCH_NO_STDIO CTORCH_NO_THREADS CTORCH_NO_SIMD CTORCH_DEBUG; do
    printf '#define %s\n%s\n' "$flag" "$impl" | check "$flag" "$cc" -std=c11 -Wpedantic
done
check "allocator hooks" "$cc" -std=c11 -Wpedantic <<'SRC'
#include <stdlib.h>
static size_t calls;
static void *my_malloc(void *ctx, size_t n) { (void)ctx; calls++; return malloc(n); }
static void my_free(void *ctx, void *p) { (void)ctx; free(p); }
#define CTORCH_MALLOC(ctx, n) my_malloc(ctx, n)
#define CTORCH_REALLOC(ctx, p, n) realloc(p, n)
#define CTORCH_FREE(ctx, p) my_free(ctx, p)
#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
int main(void) { ct_free(ct_zeros(NULL, 0, CT_FLOAT32)); return calls ? 0 : 1; }
SRC
check "header included twice" "$cc" -std=c11 -Wpedantic <<'SRC'
#include "ctorch.h"
#include "ctorch.h"
#define CTORCH_IMPLEMENTATION
#include "ctorch.h"
#include "ctorch.h"
int main(void) { return 0; }
SRC
exit $fail
