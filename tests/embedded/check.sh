#!/bin/sh
# tests/embedded/check.sh CC CXX - make test-embedded's configurations: tests/embedded/config.c
# under each of CTORCH_NO_STDIO, CTORCH_NO_THREADS, CTORCH_NO_AUTOGRAD and all three together,
# as C11 and C++17 with each given compiler and clang/clang++ where installed: compiled
# warning-free (-Werror), linked and run. Where stdio is off, the object must reference no
# FILE function; where threads are off, no pthread function (it is built without -pthread).
# Prints one line per build; exit status 1 when any failed.
cc=${1:-cc}
cxx=${2:-c++}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/../.." && pwd)
file_fns='fopen|fdopen|fclose|fread|fwrite|fprintf|vfprintf|fputs|fputc|fgetc|fgets|fflush|fseek|ftell|stderr|stdout|printf|puts|putchar|perror'
failed=0
fail() { echo "FAILED: $1"; sed 's/^/    /' "$dir/err" | head -20; failed=1; }
build() { # name compiler language-flags config-flags
    name=$1; comp=$2; lang=$3; conf=$4
    threads=-pthread
    case "$conf" in *NO_THREADS*) threads=;; esac
    # shellcheck disable=SC2086
    if ! $comp $lang -O0 -Wall -Wextra -Werror $threads $conf -c "$root/tests/embedded/config.c" \
            -o "$dir/c.o" 2> "$dir/err"; then
        fail "$name: compile"; return
    fi
    nm -u "$dir/c.o" | awk '{print $NF}' > "$dir/undef"
    case "$conf" in *NO_STDIO*)
        if grep -Ew "$file_fns" "$dir/undef" > "$dir/err"; then fail "$name: FILE functions"; return; fi;;
    esac
    case "$conf" in *NO_THREADS*)
        if grep -E '^pthread_' "$dir/undef" > "$dir/err"; then fail "$name: pthreads"; return; fi;;
    esac
    # shellcheck disable=SC2086
    if ! $comp $threads "$dir/c.o" -o "$dir/c" -lm 2> "$dir/err"; then fail "$name: link"; return; fi
    if ! "$dir/c" > "$dir/err" 2>&1; then fail "$name: run"; return; fi
    echo "ok: $name"
}
all="-DCTORCH_NO_STDIO -DCTORCH_NO_THREADS -DCTORCH_NO_AUTOGRAD"
for c in "$cc" clang; do
    command -v "$c" > /dev/null || continue
    for conf in -DCTORCH_NO_STDIO -DCTORCH_NO_THREADS -DCTORCH_NO_AUTOGRAD "$all"; do
        build "$c c11 $conf" "$c" "-std=c11 -Wpedantic" "$conf"
    done
done
for c in "$cxx" clang++; do
    command -v "$c" > /dev/null || continue
    build "$c c++17 $all" "$c" "-x c++ -std=c++17" "$all"
done
exit $failed
