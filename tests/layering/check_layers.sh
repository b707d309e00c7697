#!/usr/bin/env bash
# The layering rules of lib/http and lib/llm (docs/design/layers.md), checked on every
# `make test`:
#   - arrows point down only: core <- codec <- transport <- post, stream
#     (post and stream are siblings: neither includes the other);
#   - core/, codec/ and stream/ include no POCO, OpenSSL, curl or socket
#     header; post/ none of POCO or OpenSSL (its curl backend speaks libcurl);
#   - public headers include no POCO, OpenSSL or curl header (RapidJSON only
#     in the opt-in nous/http/json.hpp);
#   - tools/, bench/, docs/examples/ and lib/mock/ use public headers only.
# Exit 1 with one line per violation.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
status=0
fail() { echo "layering: $*"; status=1; }

rank() {
  case "$1" in
    core) echo 0 ;; codec) echo 1 ;; transport) echo 2 ;; post|stream) echo 3 ;; *) echo -1 ;;
  esac
}

system_headers_re='<(Poco/|openssl/|curl/|sys/socket\.h|netinet/|arpa/|netdb\.h|poll\.h|sys/uio\.h|sys/epoll\.h)'
poco_ssl_re='<(Poco/|openssl/)'

# Every quoted include of every lib/http file against the layer order.
while IFS= read -r file; do
  layer=${file#lib/http/}; layer=${layer%%/*}
  own=$(rank "$layer")
  [ "$own" -lt 0 ] && { fail "$file is not in a layer folder (core, codec, transport, post, stream)"; continue; }
  while IFS= read -r line; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/' <<<"$line")
    case "$target" in nous/*) continue ;; esac
    tlayer=${target%%/*}
    trank=$(rank "$tlayer")
    if [ "$trank" -lt 0 ]; then
      fail "$file includes \"$target\": name lib/http includes by their layer folder"
    elif [ "$tlayer" != "$layer" ] && [ "$trank" -ge "$own" ]; then
      fail "$file ($layer) includes \"$target\" ($tlayer): arrows point down only"
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$file")
  case "$layer" in
    core|codec|stream)
      grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]+$system_headers_re" "$file" |
        while IFS= read -r hit; do echo "layering: $file:$hit: $layer/ may not include POCO, OpenSSL, curl or socket headers"; done
      ;;
    post)
      grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]+$poco_ssl_re" "$file" |
        while IFS= read -r hit; do echo "layering: $file:$hit: post/ may not include POCO or OpenSSL headers"; done
      ;;
  esac
done < <(find lib/http -name '*.hpp' -o -name '*.cpp' | sort)

# The per-file loops above print from subshells: count their lines too.
extra=$(
  find lib/http/core lib/http/codec lib/http/stream -name '*.[ch]pp' -print0 2>/dev/null |
    xargs -0 grep -lE "^[[:space:]]*#[[:space:]]*include[[:space:]]+$system_headers_re" 2>/dev/null
  find lib/http/post -name '*.[ch]pp' -print0 2>/dev/null |
    xargs -0 grep -lE "^[[:space:]]*#[[:space:]]*include[[:space:]]+$poco_ssl_re" 2>/dev/null
)
[ -n "$extra" ] && status=1

# Public headers: nothing of the libraries we hide.
while IFS= read -r hit; do
  fail "$hit: public headers may not include POCO, OpenSSL or curl"
done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+<(Poco/|openssl/|curl/)" lib/include)
while IFS= read -r hit; do
  fail "$hit: RapidJSON only in the opt-in nous/http/json.hpp"
done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+<rapidjson/" lib/include | grep -v '^lib/include/nous/http/json.hpp:')

# lib/llm by concern, arrows down only: json <- formats, embeddings, platforms
# (a wire format carries its embeddings table, and a platform is a format at a
# cloud, so the three name each other) <-
# telemetry <- chat <- router. Includes name their folder.
llm_rank() {
  case "$1" in
    json) echo 0 ;; cost) echo 0 ;; formats|embeddings|platforms) echo 1 ;; telemetry) echo 2 ;; chat) echo 3 ;; router) echo 4 ;; *) echo -1 ;;
  esac
}
while IFS= read -r file; do
  folder=${file#lib/llm/}; folder=${folder%%/*}
  own=$(llm_rank "$folder")
  [ "$own" -lt 0 ] && { fail "$file is not in a lib/llm concern folder (json, cost, formats, embeddings, platforms, telemetry, chat, router)"; continue; }
  while IFS= read -r line; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/' <<<"$line")
    case "$target" in nous/*) continue ;; esac
    tfolder=${target%%/*}
    trank=$(llm_rank "$tfolder")
    if [ "$trank" -lt 0 ] || [ "$tfolder" = "$target" ]; then
      fail "$file includes \"$target\": name lib/llm includes by their folder"
    elif [ "$trank" -gt "$own" ]; then
      fail "$file ($folder) includes \"$target\" ($tfolder): arrows point down only"
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$file")
done < <(find lib/llm -name '*.hpp' -o -name '*.cpp' | sort)

# Applications of the library: public headers only.
for dir in tools bench docs/examples lib/mock lib/llm; do
  [ -d "$dir" ] || continue
  while IFS= read -r hit; do
    file=${hit%%:*}
    target=$(sed -E 's/.*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/' <<<"$hit")
    case "$target" in nous/*) continue ;; esac
    # A header beside the file (bench_util.hpp), or named from the folder's
    # root (lib/llm's "formats/wire_format.hpp"), is the application's own.
    [ -f "$(dirname "$file")/$target" ] && continue
    [ -f "$dir/$target" ] && continue
    fail "$hit: $dir/ uses public headers only (nous/...), not lib/http"
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$dir" --include='*.cpp' --include='*.hpp' --include='*.h')
  if grep -rqE 'lib/http' "$dir" --include=CMakeLists.txt 2>/dev/null; then
    fail "$dir/CMakeLists.txt puts lib/http on the include path"
  fi
done

if [ "$status" -eq 0 ]; then echo "layering: ok"; fi
exit "$status"
