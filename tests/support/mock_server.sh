# Sourced by the shell tests and benchmark scripts: start_mock NOUSCLI [ARG...]
# starts `nouscli mock-server --port 0 ARG...` in the background, waits for
# the URL it prints, and sets MOCK_URL and MOCK_PID (stop_mock ends it).
# Returns 1, with the server's output, when it does not start.
start_mock() {
  local nouscli=$1
  shift
  MOCK_LOG=$(mktemp)
  "$nouscli" mock-server --port 0 "$@" >"$MOCK_LOG" 2>&1 &
  MOCK_PID=$!
  MOCK_URL=""
  for _ in $(seq 1 200); do
    MOCK_URL=$(grep -o 'http://[0-9.:]*' "$MOCK_LOG" | head -1 || true)
    [ -n "$MOCK_URL" ] && return 0
    sleep 0.05
  done
  echo "the mock server did not start:"
  cat "$MOCK_LOG"
  return 1
}

stop_mock() {
  # A mock that ended by the signal (or had ended) is stopped all the same.
  [ -n "${MOCK_PID:-}" ] && { kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true; }
  [ -n "${MOCK_LOG:-}" ] && rm -f "$MOCK_LOG"
  MOCK_PID=""
}
