#!/usr/bin/env bash
# Every backpressure row in its own process (peak RSS is per process), then
# the destroy latencies and the decoder throughput.
set -euo pipefail
bin=${1:-build/bench}
first=1
for consumer in fast slow; do
  for backend in window pull window-unbounded; do
    if [ $first = 1 ]; then header=""; first=0; else header="--no-header"; fi
    "$bin/stream_backpressure" --backend "$backend" --consumer "$consumer" --no-destroy $header
  done
done
"$bin/stream_backpressure" --backend none --no-header
"$bin/decoder_throughput"
