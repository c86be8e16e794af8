#!/usr/bin/env bash
# Build Joachims' SVMlight `svm_learn` (ranking mode: -z p) from the `svmlight` sdist on PyPI, for the
# `startup` section of `structrank bench`, which measures it beside `structrank train svm-auc` when
# it is on the PATH. svm_rank_learn (SVM-rank) is not on PyPI; SVMlight's ranking mode is the C tool
# of the same author that a package registry holds, so the bench names it for what it is.
#   bash tools/build_svmlight.sh [DEST]      (default out/bin; then PATH="$PWD/out/bin:$PATH")
set -euo pipefail
dest="${1:-out/bin}"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download --no-deps --no-binary :all: -q -d "$work" "svmlight==0.4"
tar xzf "$work"/svmlight-0.4.tar.gz -C "$work"
mkdir -p "$dest"
lib="$work/svmlight-0.4/lib"
cc -O3 -o "$dest/svm_learn" "$lib/svm_learn_main.c" "$lib/svm_learn.c" "$lib/svm_common.c" "$lib/svm_hideo.c" -lm
echo "built $dest/svm_learn"
