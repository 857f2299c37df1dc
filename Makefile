# The two commands of the README: `make run` and `make test`. Both install what they need first.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
CONFIG ?=

RELEASE_DIR := build/release
TEST_DIR := build/asan
FUZZ_DIR := build/fuzz

.PHONY: all deps deps-build deps-test release run test unit fuzz fuzz-build clean

all: release

# tools/install-deps.sh profiles: `build` is what building and running the server needs, `test`
# adds the test suite's tools and peers. `make deps` installs everything.
deps: deps-test

deps-build:
	@tools/install-deps.sh build

deps-test:
	@tools/install-deps.sh test

release: deps-build
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DSLUICE_WERROR=OFF -DSLUICE_TESTS=OFF >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS)

# Starts the server: with the embedded default configuration, or CONFIG=path/to/sluice.yaml.
run: release
	./$(RELEASE_DIR)/server/sluice $(if $(CONFIG),--config $(CONFIG))

# Sanitizer build (ASan + UBSan, warnings as errors) and the whole suite through CTest.
test: deps-test
	@cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON -DSLUICE_WERROR=ON >/dev/null
	@cmake --build $(TEST_DIR) -j$(JOBS)
	cd $(TEST_DIR) && ctest --output-on-failure -j$(JOBS)

# Only the unit tests (fast).
unit: deps-test
	@cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON -DSLUICE_WERROR=ON >/dev/null
	@cmake --build $(TEST_DIR) -j$(JOBS)
	cd $(TEST_DIR) && ctest --output-on-failure -j$(JOBS) -L unit

fuzz-build: deps-test
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_DIR) -j$(JOBS)

# Every libFuzzer target for FUZZ_SECONDS seconds each.
fuzz: fuzz-build
	tools/run-fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

clean:
	rm -rf build
