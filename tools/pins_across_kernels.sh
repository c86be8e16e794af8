#!/usr/bin/env bash
# The pinned tests under other BLAS kernels and thread counts (a pin holds on any x86-64
# machine, whatever kernel OpenBLAS picks for its processor and however many threads run).
#
#   tools/pins_across_kernels.sh [RUN ...] [-- PYTEST ARGS]
#
# A RUN is a kernel name for OPENBLAS_CORETYPE (Sandybridge, Haswell, SkylakeX, ...), threads=N
# (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and NUMBA_NUM_THREADS at N), both joined by a comma
# (Sandybridge,threads=1), or "default" (neither). Without RUNs: Sandybridge, Haswell, SkylakeX
# where the processor has AVX-512 (its kernels would stop at an illegal instruction elsewhere),
# threads=1 and threads=2. Each run is one pytest process (OpenBLAS reads the variables when it
# loads); PYTHON names the interpreter (default .venv/bin/python, else python3). The data pins need
# STRUCTRANK_DATA. It prints each run's result and wall time, and fails when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
runs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do runs+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
if [ ${#runs[@]} -eq 0 ]; then
  runs=(Sandybridge Haswell)
  grep -qw avx512f /proc/cpuinfo 2>/dev/null && runs+=(SkylakeX)
  runs+=(threads=1 threads=2)
fi
tests=(tests/library/test_models_pinned.py tests/library/test_pinned.py tests/library/test_pinned_*.py tests/lab/test_pinned_*.py)
failed=0
summary=()
for run in "${runs[@]}"; do
  vars=()
  IFS=, read -ra parts <<< "$run"
  for part in "${parts[@]}"; do
    case "$part" in
      default) ;;
      threads=[0-9]*) n=${part#threads=}; vars+=(OMP_NUM_THREADS="$n" OPENBLAS_NUM_THREADS="$n" NUMBA_NUM_THREADS="$n") ;;
      [A-Za-z]*) vars+=(OPENBLAS_CORETYPE="$part") ;;
      *) echo "pins_across_kernels: run '$run': '$part' is neither a kernel name, threads=N nor default" >&2; exit 2 ;;
    esac
  done
  echo "== $run: ${vars[*]:-(no variable)}"
  start=$(date +%s)
  env "${vars[@]}" "$python" -m pytest -q -p no:cacheprovider "${tests[@]}" "$@"
  status=$?
  seconds=$(( $(date +%s) - start ))
  [ $status -eq 0 ] && result=passed || { result="FAILED ($status)"; failed=1; }
  summary+=("$run: $result in ${seconds} s")
done
printf '%s\n' "== pins across kernels" "${summary[@]}"
exit $failed
