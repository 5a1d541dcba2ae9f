#!/usr/bin/env bash
# Measures every row of the README's Performance table in one sitting, one command after the
# other, each with the time and the load average before and after it, into OUT (default
# /tmp/chatfeed-readme-table). Run from the repository on a quiet machine, after the release builds:
#
#   swift build -c release --product chatfeedd
#   (cd Benchmarks && swift build -c release)
#   Benchmarks/Tools/readme-table.sh [OUT]
#
# BASELINE=DIR (a checkout of an earlier commit with its release builds, chatfeedd and its own
# Benchmarks' DaemonLoad) runs that commit's saturated ingest beside this one's in each round.
# ROUNDS (default 2) sets the rounds of the ingest rows; PAIRS (default 6) the pairs of the
# saturated 10,000-chat ingest and raw C, the rounds' among them. About an hour in all on 2 cores.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
out=${1:-/tmp/chatfeed-readme-table}
rounds=${ROUNDS:-2}
mkdir -p "$out"
load=$root/Benchmarks/.build/release/DaemonLoad
[ -x "$load" ] && [ -x "$root/.build/release/chatfeedd" ] || { echo "build chatfeedd and Benchmarks in release first" >&2; exit 2; }

# step NAME COMMAND...: runs COMMAND with its output in OUT/NAME.log and a line in OUT/index.log.
step() {
    local name=$1; shift
    echo "$name start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/index.log"
    "$@" > "$out/$name.log" 2>&1
    local status=$?
    echo "$name end   $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) rc $status" | tee -a "$out/index.log"
}

echo "commit $(git rev-parse --short HEAD) $(git status --porcelain | grep -q . && echo '(with uncommitted changes)')" | tee -a "$out/index.log"

# The disk's speed first: raw C's paced p99 under 6 ms is a fast day, over 10 ms a slow one.
step raw-paced-0 "$load" raw --rate 5000 --duration 10 --group 1000 --memstatus off

for round in $(seq 1 "$rounds"); do
    # Saturated, 10,000 chats, one acking full-list subscriber, 100,000 posts; raw C beside it.
    step "raw-10k-$round" "$load" raw --group 300 --memstatus off
    step "ingest-10k-$round" "$load" ingest
    if [ -n "${BASELINE:-}" ]; then
        step "baseline-ingest-10k-$round" bash -c "cd '$BASELINE/Benchmarks' && .build/release/DaemonLoad ingest"
    fi
    # Paced at 5,000 posts/s: write -> batch latency.
    step "raw-paced-$round" "$load" raw --rate 5000 --duration 10 --group 1000 --memstatus off
    step "ingest-paced-$round" "$load" ingest --rate 5000 --duration 10
    # 1,000,000 chats, a top-100 window.
    step "raw-1m-$round" "$load" raw --chats 1000000 --posts 50000 --group 300 --memstatus off
    step "ingest-1m-$round" "$load" ingest --chats 1000000 --limit 100 --posts 50000
done

# More pairs of the saturated 10,000-chat ingest with raw C beside it, PAIRS in all (default 6,
# the rounds' own counted): the machine's speed drifts by 10-15% within minutes, so the README
# gives the median of the pairs' ratios, with every pair's.
for pair in $(seq $((rounds + 1)) "${PAIRS:-6}"); do
    step "raw-10k-$pair" "$load" raw --group 300 --memstatus off
    step "ingest-10k-$pair" "$load" ingest
done

step resets-top50 "$load" ingest --limit 50
step startup "$load" startup --runs 3
step fanout "$load" fanout --members 2,10,100,1000,10000
step users "$load" users
step subscriber-memory python3 Benchmarks/Tools/subscriber_memory.py --daemon .build/release/chatfeedd \
    --chats 10000 --changed 10000 --subscriptions 256 --limit 0
step diff bash -c 'cd Benchmarks && swift package benchmark --target ListDiffBenchmarks --no-progress \
    --filter "ListDiff blind diff, 100000.*" --filter "stdlib.*100000 rows, bottom.*"'
# (The baseline row, making the events alone, is subtracted from the feed's rows.)
step feed bash -c 'cd Benchmarks && swift package benchmark --target FeedBenchmarks --no-progress \
    --filter "ChangeFeed 1M, full list subscription.*" --filter "ChangeFeed 1M, baseline: bottom.*"'
step store bash -c 'cd Benchmarks && swift package benchmark --target StoreBenchmarks --no-progress \
    --filter "Store post to a chat of .*"'
step gateway-fanout "$load" gateway fanout --rates 3200,4800 --seconds 10
step gateway-idle "$load" gateway idle
step gateway-stall "$load" gateway stall
step gateway-restart "$load" gateway restart
echo "done: $out/index.log"
