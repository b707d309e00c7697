#!/usr/bin/env bash
# Debian nginx on loopback, serving the benchmark bodies to POST:
#   bench/nginx/nginx.sh start [PORT]   (default 18080; prints the URL base)
#   bench/nginx/nginx.sh stop
# The same bodies over https on PORT+1 (https://localhost:18081), with a test
# CA the script makes: $NGINX_BENCH_DIR/tls/ca.pem (default
# /tmp/nous-bench-nginx/tls/ca.pem); pass it as --cacert.
# Bodies: /small (1 KiB JSON), /large (256 KiB), /sse100m (~100 MiB of
# OpenAI-style SSE chunks ending in [DONE]), /v1/chat/completions (16 SSE
# tokens and [DONE], for the soak). Installs nginx if missing.
set -euo pipefail
dir=${NGINX_BENCH_DIR:-/tmp/nous-bench-nginx}
cmd=${1:-start}
port=${2:-18080}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$cmd" = stop ]; then
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  exit 0
fi
if ! command -v nginx >/dev/null; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx
fi
mkdir -p "$dir/www/v1/chat"
python3 - "$dir/www" <<'PY'
import json, os, sys
www = sys.argv[1]
def write(name, data):
    path = os.path.join(www, name)
    if not os.path.exists(path) or os.path.getsize(path) != len(data):
        with open(path, "wb") as f:
            f.write(data)
small = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "x" * 860}, "finish_reason": "stop"}]},
    separators=(",", ":")).encode()
write("small", small)
write("large", (b"0123456789abcdef" * 16384))
def chunk(text):
    return ("data: " + json.dumps({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "bench",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
            separators=(",", ":")) + "\n\n").encode()
words = ["Hello", " from", " the", " nous", "-http", " bench", " server", "."] * 2
write("v1/chat/completions", b"".join(chunk(w) for w in words) + b"data: [DONE]\n\n")
one = chunk(" token")
count = (100 << 20) // len(one)
write("sse100m", one * count + b"data: [DONE]\n\n")
small_event = b'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n'
write("sse49", small_event * ((100 << 20) // len(small_event)) + b"data: [DONE]\n\n")
PY
if [ ! -f "$dir/tls/server.pem" ]; then
  mkdir -p "$dir/tls"
  (
    cd "$dir/tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 30 \
      -subj /CN=nous-bench-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj /CN=localhost
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 -extfile server.ext
  ) >/dev/null 2>&1
fi
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@TLS_PORT@|$((port + 1))|g" "$here/nginx.conf.in" >"$dir/nginx.conf"
[ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null && sleep 0.2 || true
nginx -c "$dir/nginx.conf" -e "$dir/error.log"
echo "http://127.0.0.1:$port"
