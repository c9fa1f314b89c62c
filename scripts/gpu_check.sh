#!/usr/bin/env bash
# The one script a GPU run uses (docs/GPU_TESTS.md):
#
#   bash scripts/gpu_check.sh [--wheels DIR]     # on a GPU machine
#
# --wheels DIR (or TLE_WHEELS=DIR): wheels of packages the GPU machine lacks (e.g. lark), installed
# with --no-index --no-deps into /tmp/site, which goes on PYTHONPATH with the repository.
#
# Stages, each under `timeout`, each continuing on failure; logs go to $OUT (./out if unset):
#   setup     install the wheels of --wheels DIR, if given; nvidia-smi
#   kernels   pytest -m gpu tests/gpu/test_pipe_kernels.py   (tle_kernels/gpu_tests, element-exact)
#   fuzz      pytest -m gpu tests/gpu/test_e2e_fuzz.py       (stamp kernels of random protocols)
#   bench     benchmarks/pipe_copy.py                        (pipe copy vs plain Triton copy)
#   consan    the kernel tests again (and a few fuzz examples) under
#             TRITON_INSTRUMENTATION_MODE=consan (Triton's concurrency sanitizer), with register
#             gathers (TLE_CP_ASYNC=0: consan does not model mbarrier-completed cp.async)
# and prints a summary table last. Exit status: 0 when every stage that ran passed.
#
# Knobs (environment): T_KERNELS, T_FUZZ, T_BENCH, T_CONSAN (seconds per stage; default 150, 140,
# 100, 120: together under 600 s, for machines that limit a command to that), GPU_CHECK_CONSAN=0
# (skip consan), GPU_CHECK_MAXFAIL (pytest --maxfail, default 1 = -x), TLE_FUZZ_EXAMPLES (default
# 50), BENCH_ARGS (extra arguments of pipe_copy.py), STAGES (default "kernels fuzz bench consan").
# A hung stage is killed by its timeout; pytest runs with -v and python -u, so the last test
# named in its log is the one that hung, and fuzz_programs.log ends with the protocol that hung.

set -u
WHEELS="${TLE_WHEELS:-}"
while [ $# -gt 0 ]; do
    case $1 in
        --wheels) WHEELS="${2:?--wheels needs a directory}"; shift 2 ;;
        --wheels=*) WHEELS="${1#--wheels=}"; shift ;;
        -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "$WHEELS" ]; then
    [ -d "$WHEELS" ] || { echo "gpu_check.sh: no directory '$WHEELS'" >&2; exit 2; }
    WHEELS="$(cd "$WHEELS" && pwd)"  # absolute: the script changes directory
fi
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"

T_KERNELS="${T_KERNELS:-150}"
T_FUZZ="${T_FUZZ:-140}"
T_BENCH="${T_BENCH:-100}"
T_CONSAN="${T_CONSAN:-120}"
MAXFAIL="${GPU_CHECK_MAXFAIL:-1}"
STAGES="${STAGES:-kernels fuzz bench consan}"
[ "${GPU_CHECK_CONSAN:-1}" = "0" ] && STAGES="${STAGES/consan/}"

declare -a NAMES STATUS SECS NOTES

record() {  # name rc seconds log
    local name=$1 rc=$2 secs=$3 log=$4 status note
    case $rc in
        0) status=PASS
           # all skipped (no CUDA?) is not a pass
           if grep -qE "[0-9]+ skipped" "$log" && ! grep -qE "[0-9]+ passed" "$log" \
                   && grep -qE "^=+ .* in [0-9.]+s" "$log"; then status=SKIPPED; fi ;;
        124|137) status=TIMEOUT ;;
        *) status="FAIL($rc)" ;;
    esac
    note=$(grep -E "[0-9]+ (passed|failed|error|skipped)|no tests ran|bar >=|Error|error:" "$log" 2>/dev/null \
           | tail -n 2 | tr '\n' ' ' | cut -c1-150)
    [ "$status" = TIMEOUT ] && note="last: $(grep -E '::' "$log" 2>/dev/null | tail -n 1 | cut -c1-120)"
    NAMES+=("$name"); STATUS+=("$status"); SECS+=("$secs"); NOTES+=("$note")
}

run_stage() {  # name timeout log command...
    local name=$1 t=$2 log=$3; shift 3
    echo "=== $name (timeout ${t}s) : $*" | tee "$log"
    local start=$SECONDS
    timeout --kill-after=10 "$t" "$@" >>"$log" 2>&1
    local rc=$?
    tail -n 25 "$log"
    record "$name" "$rc" "$((SECONDS - start))" "$log"
}

# --- setup -----------------------------------------------------------------------------------
{
    echo "=== setup $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) (uncommitted changes: $(git status --porcelain 2>/dev/null | wc -l))"
    if [ -n "$WHEELS" ]; then
        if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
            python3 -m pip install -q --no-index --no-deps --target /tmp/site "$WHEELS"/*.whl \
                && echo "installed: $(cd "$WHEELS" && ls -- *.whl)"
        else
            echo "no wheels in $WHEELS"
        fi
    fi
    nvidia-smi || true
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else '')"
} 2>&1 | tee "$OUT/setup.log"
if [ -n "$WHEELS" ]; then
    export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export CI=1  # the derandomized hypothesis profile of tests/conftest.py
export TLE_CACHE_DIR="${TLE_CACHE_DIR:-/tmp/tle_gluon_cache}"

PYTEST=(python3 -u -m pytest -m gpu -v -p no:cacheprovider --maxfail="$MAXFAIL")

for stage in $STAGES; do
    case $stage in
        kernels)
            run_stage kernels "$T_KERNELS" "$OUT/kernels.log" \
                "${PYTEST[@]}" tests/gpu/test_pipe_kernels.py ;;
        fuzz)
            : >"$OUT/fuzz_programs.log"
            TLE_FUZZ_LOG="$OUT/fuzz_programs.log" run_stage fuzz "$T_FUZZ" "$OUT/fuzz.log" \
                "${PYTEST[@]}" tests/gpu/test_e2e_fuzz.py ;;
        bench)
            run_stage bench "$T_BENCH" "$OUT/bench.log" \
                python3 -u benchmarks/pipe_copy.py --json "$OUT/pipe_copy.json" ${BENCH_ARGS:-} ;;
        consan)
            : >"$OUT/fuzz_programs_consan.log"
            TRITON_INSTRUMENTATION_MODE=consan TRITON_CACHE_DIR=/tmp/triton_cache_consan TLE_CP_ASYNC=0 \
            TLE_CACHE_DIR=/tmp/tle_gluon_cache_consan TLE_FUZZ_EXAMPLES="${TLE_FUZZ_EXAMPLES_CONSAN:-8}" \
            TLE_FUZZ_LOG="$OUT/fuzz_programs_consan.log" \
                run_stage consan "$T_CONSAN" "$OUT/consan.log" \
                "${PYTEST[@]}" tests/gpu/test_pipe_kernels.py tests/gpu/test_e2e_fuzz.py ;;
        *) echo "unknown stage $stage" ;;
    esac
done

# --- summary (last) --------------------------------------------------------------------------
{
    echo
    echo "=== gpu_check summary ($(date -u +%FT%TZ), logs in $OUT)"
    printf "%-8s %-10s %6s  %s\n" stage status secs notes
    for i in "${!NAMES[@]}"; do
        printf "%-8s %-10s %6s  %s\n" "${NAMES[$i]}" "${STATUS[$i]}" "${SECS[$i]}" "${NOTES[$i]}"
    done
    [ -f "$OUT/bench.log" ] && grep -E "GB/s|/ best plain|^pipe|^plain" "$OUT/bench.log" | sed 's/^/  /'
} | tee "$OUT/summary.txt"
rc=0
for s in "${STATUS[@]}"; do [ "$s" = PASS ] || rc=1; done
exit $rc
