# nous-http: every target works alone on a fresh Debian 12 machine as root.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEB_PACKAGES := build-essential cmake pkg-config libpoco-dev libconcurrentqueue-dev \
  libboost-program-options-dev rapidjson-dev catch2 locales libcurl4-openssl-dev libssl-dev openssl nghttp2-server clang clang-format \
  nginx wrk redis-server libhiredis-dev python3-numpy
PREFIX ?= /usr/local

.PHONY: all deps build test test-nocurl sdk-test demo bench asan tsan fuzz format format-check install clean
FUZZ_SECONDS ?= 60

all: build

# Idempotent: apt-get runs only when a package is missing, after apt-get update.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
	@# node and npm for `make sdk-test`: Debian's, unless the machine already has a node.
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  echo "installing: nodejs npm"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; \
	fi

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

# The providers' official SDKs (npm) read the mock server: needs the npm
# registry, and fails (never skips) without it. Run by .ci/run.
sdk-test: deps build
	bash tests/sdk/run.sh $(BUILD)/tools/nouscli $(BUILD)/sdk

# The same library built without libcurl: nothing may refer to curl, and
# selecting `curl` must warn and fall back (library and resolution tests).
test-nocurl: deps
	cmake -S . -B build-nocurl -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNOUS_WITH_CURL=OFF -DNOUS_BUILD_BENCH=OFF
	cmake --build build-nocurl -j $(JOBS)
	@if ldd build-nocurl/tools/nouscli build-nocurl/tests/backends_test | grep -q libcurl; then \
	  echo "libcurl is linked into the NOUS_WITH_CURL=OFF build"; exit 1; fi
	@echo "ldd: no libcurl in the NOUS_WITH_CURL=OFF build"
	cd build-nocurl && ctest --output-on-failure -j $(JOBS) --timeout 300 \
	  -R "^(backends_test|config_test|post_test|url_test|headers_test|http1_parser_test|retry_test):"

demo: deps build
	./tools/demo.sh $(BUILD)/tools/nouscli

bench: deps build
	$(BUILD)/bench/http_backend --seconds 2 --warmup 1
	./bench/run_stream_bench.sh $(BUILD)/bench

asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNOUS_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 600

tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DNOUS_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp \
	  ctest --output-on-failure -j $(JOBS) --timeout 600 $(TSAN_CTEST_ARGS)

# libFuzzer targets with clang (ASan+UBSan), each run FUZZ_SECONDS from its corpus.
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNOUS_FUZZ=ON \
	  -DNOUS_BUILD_TESTS=OFF -DNOUS_BUILD_BENCH=OFF -DNOUS_BUILD_TOOLS=OFF -DNOUS_WITH_CURL=OFF
	cmake --build build-fuzz -j $(JOBS) --target fuzz_targets
	./tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# .clang-format is the style: `make format` applies it, `make format-check`
# (in CI) fails on any file that differs from it.
FORMAT_FILES = $(shell git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' 2>/dev/null || find lib tools tests bench docs -name '*.cpp' -o -name '*.hpp')
format: deps
	clang-format -i $(FORMAT_FILES)

format-check: deps
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format-check: $(words $(FORMAT_FILES)) files match .clang-format"

install: deps build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-nocurl build-fuzz
