#!/bin/sh
# tests/embedded/arch.sh check|size BUILD TARGET... - the embedded examples on several targets,
# each TARGET given as "name|compiler|flags|runner" (runner: empty, or e.g. qemu-arm-static -L).
#   check: builds examples/embed_infer.c and examples/train_on_device.c with flags, runs them
#          (each fails on its own when an allocator hook is called after start-up, or, for the
#          training, when a loss is more than 1e-4 from PyTorch's), then requires every
#          target's fine-tuning losses to be within 1e-5 of the first target's.
#   size:  builds examples/embed_infer.c -Os, static, stripped, only the functions it calls
#          (CTORCH_STATIC, -ffunction-sections -fdata-sections -Wl,--gc-sections), and an
#          empty static program the same way; prints both sizes, their difference (ctorch,
#          the model and the test images) and the arena the example plans on that target.
mode=$1
build=$2
shift 2
failed=0
for target in "$@"; do
    name=$(echo "$target" | cut -d'|' -f1)
    comp=$(echo "$target" | cut -d'|' -f2)
    flags=$(echo "$target" | cut -d'|' -f3)
    runner=$(echo "$target" | cut -d'|' -f4)
    if [ "$mode" = size ]; then
        small="$flags -Os -DCTORCH_STATIC -ffunction-sections -fdata-sections -Wl,--gc-sections -static -s"
        exe=$build/size_embed_infer_$name
        # shellcheck disable=SC2086
        $comp -std=c11 $small examples/embed_infer.c -o "$exe" -lm || exit 1
        # shellcheck disable=SC2086
        printf 'int main(void) { return 0; }\n' | $comp -std=c11 $small -x c - -o "$exe.empty" || exit 1
        bytes=$(wc -c < "$exe")
        empty=$(wc -c < "$exe.empty")
        # shellcheck disable=SC2086
        arena=$($runner "$exe" | sed -n 's/^arena: \([0-9]*\) bytes.*/\1/p')
        [ -n "$arena" ] || failed=1
        printf '%-8s binary %7d bytes  empty static program %7d  difference %7d  arena %7s bytes\n' \
            "$name" "$bytes" "$empty" $((bytes - empty)) "${arena:-FAILED}"
        continue
    fi
    for ex in embed_infer train_on_device; do
        exe=$build/${ex}_$name
        # shellcheck disable=SC2086
        if ! $comp -std=c11 $flags -Wall -Wextra -Wpedantic -Werror examples/$ex.c -o "$exe" -lm; then
            failed=1
            continue
        fi
        # shellcheck disable=SC2086
        if $runner "$exe" > "$exe.out" 2>&1; then
            echo "$ex on $name: $(tail -1 "$exe.out")"
        else
            echo "$ex on $name FAILED:"
            sed 's/^/    /' "$exe.out"
            failed=1
        fi
    done
    grep '^epoch' "$build/train_on_device_$name.out" 2> /dev/null | sed "s/^/    $name: /"
done
if [ "$mode" = check ]; then
    first=$(echo "$1" | cut -d'|' -f1)
    for target in "$@"; do
        name=$(echo "$target" | cut -d'|' -f1)
        paste "$build/train_on_device_$first.out" "$build/train_on_device_$name.out" |
            awk -v n="$name" -v f="$first" '/^epoch/ {
                a = $4; b = $(NF - 2); d = a - b; if (d < 0) d = -d;
                if (d > 1e-5) { printf "loss on %s %s differs from %s %s\n", n, b, f, a; bad = 1 } }
                END { exit bad }' || failed=1
    done
fi
exit $failed
