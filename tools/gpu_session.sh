#!/usr/bin/env bash
# Everything the project checks on a lent GPU machine, in stages that each fit one 10-minute command. That machine
# has torch and nvcc but no package registry: `make gpu-wheels` (here, with a registry) downloads what it lacks into
# .whl/ (git-ignored), which travels with the checkout; each stage installs it first (a few seconds).
#
#   bash tools/gpu_session.sh tests        # the suite, -n 14 (the cuda cases run there)
#   bash tools/gpu_session.sh notebooks    # every notebook top to bottom, build/report/
#   bash tools/gpu_session.sh bench        # the four ladders measured beside the model; the model's ops (bench/)
#   bash tools/gpu_session.sh ncu          # ncu's per-line counters of one launch per kernel (tools/ncu_lines.py)
#   bash tools/gpu_session.sh published    # siboehm's SGEMM kernels timed, for the model (bench/published_gemm.py)
#   bash tools/gpu_session.sh sanitizer    # check mode's bugs under compute-sanitizer (tools/sanitize_cases.py)
#   bash tools/gpu_session.sh all          # the six, one after another
#
# What each stage prints also goes to $OUT/<stage>.txt (OUT defaults to build/gpu-session). The ncu stage leaves its
# reports and CSVs in $OUT/ncu and only profiles (a few minutes of GPU); the model beside them needs no GPU:
# `python tools/ncu_lines.py --join build/gpu-session/ncu` on any machine (NCU_JOIN=1 joins there too). The published
# stage likewise only times (a minute of GPU) into $OUT/published.json, with the device's name: the model beside it on
# any machine is `python bench/published_gemm.py --measured build/gpu-session/published.json`, on that device's row of
# kp.gpumodel.gpus (an H100's: "H100 SXM"), or the measured column alone, with a warning, where it has none (an H200).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/gpu-session}
DEPS=${KP_GPU_DEPS:-/tmp/kp-gpu-deps}
PY=${PYTHON:-python3}
mkdir -p "$OUT"

install() {
  if [ -d .whl ] && [ ! -e "$DEPS/.installed" ]; then
    "$PY" -m pip install --quiet --no-index --no-deps --target "$DEPS" .whl/*.whl && touch "$DEPS/.installed"
  fi
  export PYTHONPATH="$DEPS:$PWD${PYTHONPATH:+:$PYTHONPATH}"
  if [ ! -d "$DEPS/jupyter/share/jupyter/kernels/python3" ]; then
    "$PY" -m ipykernel install --prefix "$DEPS/jupyter" >/dev/null 2>&1 || echo "no ipykernel: run make gpu-wheels"
  fi
  export JUPYTER_PATH="$DEPS/jupyter/share/jupyter"
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
}

# The SM clock the GPU holds under each stage's load (the model takes the data sheet's boost clock; NVIDIA documents
# only that a board runs between its base clock and that, as its power target allows): sampled every 200 ms into
# $OUT/clocks-<stage>.csv, and summarised over the samples with the GPU at least 90% busy.
clocks_start() {
  command -v nvidia-smi >/dev/null || return 0
  nvidia-smi --query-gpu=timestamp,utilization.gpu,clocks.sm,clocks.max.sm,power.draw,power.limit \
    --format=csv,noheader,nounits -lms 200 >"$OUT/clocks-$1.csv" 2>/dev/null &
  CLOCKS_PID=$!
}

clocks_stop() {
  [ -n "${CLOCKS_PID:-}" ] || return 0
  kill "$CLOCKS_PID" 2>/dev/null
  wait "$CLOCKS_PID" 2>/dev/null
  CLOCKS_PID=
  awk -F', *' '$2 >= 90 { n++; s += $3; if (!lo || $3 < lo) lo = $3; if ($3 > hi) hi = $3; max = $4; w += $5 }
    END { if (n) printf "SM clock at >= 90%% busy: %d samples, mean %.0f MHz (%d-%d), max clock %s MHz, mean power %.0f W\n",
      n, s / n, lo, hi, max, w / n; else print "SM clock: no sample with the GPU >= 90% busy" }' "$OUT/clocks-$1.csv"
}

stage() {
  echo "== $1: $(date -u +%FT%TZ)"
  case $1 in
    tests) "$PY" -m pytest -q -p no:cacheprovider -n "${JOBS:-14}" -rs ;;
    notebooks) "$PY" tools/run_notebooks.py && cp -r build/report "$OUT/report" ;;
    bench)
      # bench/gpu_model.py sets the model against the README's H100 figures and runs no kernel on the GPU: beside the
      # ladders (one after another, so that no two time the GPU at once), pinned to the last core (it runs one torch
      # thread) and the ladders to the others, so that it takes no core from the ladders' launches; unpinned where
      # taskset or a second core is missing.
      local cores pin_model=() pin_ladders=()
      cores=$(nproc 2>/dev/null || echo 1)
      if command -v taskset >/dev/null && [ "$cores" -ge 2 ]; then
        pin_model=(taskset -c $((cores - 1))) pin_ladders=(taskset -c 0-$((cores - 2)))
      fi
      "${pin_model[@]}" "$PY" bench/gpu_model.py >"$OUT/bench-gpu_model.txt" 2>&1 &
      local model=$! rc=0
      for ladder in linear colsum softmax attention; do "${pin_ladders[@]}" "$PY" "bench/ladder_$ladder.py" || rc=1; done
      wait $model || rc=1
      cat "$OUT/bench-gpu_model.txt"
      return $rc
      ;;
    ncu)
      "$PY" tools/ncu_lines.py --ncu-only --out "$OUT/ncu" || return 1
      [ "${NCU_JOIN:-0}" = 0 ] || "$PY" tools/ncu_lines.py --join "$OUT/ncu"
      ;;
    published)
      # Times only: which GPU the model times is read from the file's device name when it is joined (see above)
      "$PY" bench/published_gemm.py --measure-only --out "$OUT/published.json" || return 1
      nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed 's/^/nvidia-smi names the GPU: /'
      ;;
    sanitizer) "$PY" tools/sanitize_cases.py ;;
    *) echo "unknown stage $1: tests, notebooks, bench, ncu, published, sanitizer or all"; return 2 ;;
  esac
}

install
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/gpu.txt" 2>&1
"$PY" -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" >>"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
status=0
for s in $([ "${1:-all}" = all ] && echo tests notebooks bench ncu published sanitizer || echo "$@"); do
  clocks_start "$s"
  stage "$s" 2>&1 | tee "$OUT/$s.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  clocks_stop "$s" 2>&1 | tee -a "$OUT/$s.txt"
done
exit $status
