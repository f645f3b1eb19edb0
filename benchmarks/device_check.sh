#!/usr/bin/env bash
# Issue 30's device run, in one call on the device machine (and testable on a CPU machine,
# where the gpu tests skip and the benchmark prints "skipped: no GPU"):
#   1. install the carried wheels (.whl/*.whl: what the device image lacks) into $SITE;
#   2. print the device, Python and the numerical packages' versions;
#   3. the tests marked gpu (tests/test_gpu.py) -> $OUT/tests.log;
#   4. benchmarks/gpu.py --out $OUT -> $OUT/gpu.md, $OUT/gpu.json, $OUT/bench.log.
# Ends inside TOTAL seconds (default 470, under 8 minutes): each step has its own timeout and
# the benchmark's --budget is what is left. Exit status: 0 when the tests and the benchmark
# passed, else the first failing step's.
#   OUT=/tmp/out benchmarks/device_check.sh            (env: PYTHON, WHEELS, SITE, TOTAL, SPOTS, GAMES, SWEEP, LIMIT, BLOCK, RUNNERS,
#   TEST_TIMEOUT; tests/test_device_check.py runs it at small sizes on the CPU)
set -o pipefail
: "${OUT:?set OUT to an output directory}"
cd "$(dirname "$0")/.." || exit 2
START=$(date +%s)
PY=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
TOTAL=${TOTAL:-470}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
elapsed() { echo $(( $(date +%s) - START )); }

echo "== wheels"
WHEELS=${WHEELS:-.whl}
if compgen -G "$WHEELS/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/*.whl \
        || { echo "FAILED: installing the carried wheels"; exit 3; }
    export PYTHONPATH="$SITE:$PWD"
    ls "$WHEELS"
else
    echo "no wheels in $WHEELS: the installed packages only"
    export PYTHONPATH="$PWD"
fi

echo "== machine ($(elapsed) s)"
nvidia-smi 2>&1 | head -20 || echo "no nvidia-smi"
echo "cpus: $(nproc)"; "$PY" --version
"$PY" -m pip list 2>/dev/null | grep -iE 'numba|numpy|cupy|llvmlite|scipy|highspy|phevaluator|open.spiel|pytest'
"$PY" - <<'PY' || { echo "FAILED: treeplex does not import"; exit 4; }
import numba, numpy, treeplex
print(f"treeplex imports; numba {numba.__version__} threads {numba.config.NUMBA_NUM_THREADS}, numpy {numpy.__version__}")
try:
    import cupy
    print(f"cupy {cupy.__version__}, devices: {cupy.cuda.runtime.getDeviceCount()}")
except Exception as e:
    print(f"cupy: not usable here ({type(e).__name__}: {e})")
try:
    import pyspiel  # noqa: F401
    print("pyspiel imports")
except Exception as e:
    print(f"pyspiel: not usable ({type(e).__name__})")
PY

echo "== tests marked gpu ($(elapsed) s)"
[ "${TEST_TIMEOUT:-170}" = 0 ] && echo "skipped (TEST_TIMEOUT=0)" || timeout -k 5 "${TEST_TIMEOUT:-170}" "$PY" -m pytest -q -m gpu -p no:cacheprovider -rs tests/test_gpu.py 2>&1 \
    | tee "$OUT/tests.log"
rc_tests=$?
echo "tests exit status: $rc_tests"

LEFT=$(( TOTAL - $(elapsed) - 25 ))
echo "== benchmark, budget $LEFT s ($(elapsed) s)"
if [ "$LEFT" -lt 30 ]; then
    echo "FAILED: no time left for the benchmark"; rc_bench=5
else
    timeout -s ABRT -k 5 $(( LEFT + 15 )) "$PY" -X faulthandler benchmarks/gpu.py --out "$OUT" --budget "$LEFT" \
        --games "${GAMES-leduc,liars_dice}" --spots "${SPOTS:-RIVER-E2,TURN,FLOP-FAST}" \
        --sweep "${SWEEP-50,100,200,400,700,1000}" --limit "${LIMIT:-15}" --block "${BLOCK:-0.5}" \
        --runners "${RUNNERS:-numba:float64,gpu:float64,gpu:float32}" 2>&1 | tee "$OUT/bench.log"
    rc_bench=$?
fi
echo "== done in $(elapsed) s: tests $rc_tests, benchmark $rc_bench"
[ "$rc_tests" -ne 0 ] && exit "$rc_tests"
exit "$rc_bench"
