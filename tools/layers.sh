#!/usr/bin/env bash
# The C files form layers: no file may use, directly or through others, a
# symbol of a file that uses one of its own. Compiles src/*.c in a temporary
# folder, reads defined and used symbols with nm, and fails when the graph
# "file A uses a symbol defined in file B" has a cycle (tsort finds them).
# Prints the edges, and "layers: no cycles" or the files in a cycle. Then
# the same for the R files (tools/layers-R.R), with the 500-line limit.
set -euo pipefail
cd "$(dirname "$0")/.."
Rscript tools/layers-R.R
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp src/*.c src/*.h src/Makevars "$tmp"/
(cd "$tmp" && for f in *.c; do R CMD COMPILE "$f" > /dev/null 2>&1 || { echo "layers: $f does not compile"; exit 1; }; done)

edges="$tmp/edges"
: > "$edges"
for o in "$tmp"/*.o; do
  nm --defined-only -g "$o" | awk -v f="$(basename "$o" .o)" '{print $3, f}'
done | sort -u > "$tmp/defs"
for o in "$tmp"/*.o; do
  user=$(basename "$o" .o)
  nm -u "$o" | awk '{print $2}' | sort -u | join - "$tmp/defs" | awk -v u="$user" '$2 != u {print u, $2}'
done | sort -u > "$edges"

echo "layers: file -> files whose symbols it uses"
awk '{a[$1] = a[$1] " " $2} END {for (k in a) print "  " k ":" a[k]}' "$edges" | sort
if out=$(tsort "$edges" 2>&1 >/dev/null) && [ -z "$out" ]; then
  echo "layers: no cycles"
else
  echo "layers: cycle among the C files:"
  echo "$out" | sed 's/^/  /'
  exit 1
fi
