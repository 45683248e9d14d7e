#!/bin/bash
# tests/fuzz/run.sh [SECONDS] - builds the front-end fuzzer with clang-19
# (libFuzzer + ASan + UBSan) and runs it on a copy of the seed corpus
# (tests/fuzz/corpus plus the scripts of tests/lang) for SECONDS (default 600).
# Needs the generated lexer/parser of a meson build in build/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-600}
out=${FUZZ_OUT:-$top/build/fuzz}
mkdir -p "$out/corpus"
gen=$top/build/src/parser
[ -f "$gen/parser.c" ] || ninja -C "$top/build" >/dev/null
clang-19 -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$top/src" -I"$top/src/parser" -I"$gen" -o "$out/fuzz_parse" \
	"$here/fuzz_parse.c" "$top"/src/parser/*.c "$top"/src/sema/*.c \
	"$gen/lexer.c" "$gen/parser.c" "$top"/src/util/*.c
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
for f in "$top"/tests/lang/good/*.bt "$top"/tests/lang/bad/*.bt; do
	[ -f "$f" ] && cp "$f" "$out/corpus/$(basename "$(dirname "$f")")_$(basename "$f")"
done
cd "$out"
exec ./fuzz_parse -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-print_final_stats=1 corpus
