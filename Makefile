# The two commands of the README: `make run` and `make test`. Both install what they need first.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Tests at once: twice the cores, since most wait on real-time media; the busy ones take two slots
# (tests/CMakeLists.txt, docs/testing.md).
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
# `make fuzz`: the smoke run CI makes (every seed corpus replayed, then FUZZ_BUDGET seconds shared
# evenly by all targets). `make fuzz-long`: FUZZ_LONG_SECONDS per target.
FUZZ_BUDGET ?= 240
FUZZ_LONG_SECONDS ?= 600
CONFIG ?=

RELEASE_DIR := build/release
# `make deb` writes sluice_VERSION_amd64.deb here (deploy/docker/Dockerfile copies it from here).
DEB_DIR := build/deb
# One sanitizer build (clang, ASan + UBSan) holds the server, the tests and the fuzz targets
# (docs/testing.md says why one build and not two).
TEST_DIR := build/asan
SANITIZE_CMAKE := CC=clang-14 CXX=clang++-14 cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DSLUICE_SANITIZE=ON -DSLUICE_FUZZ=ON -DSLUICE_WERROR=ON

.PHONY: all deps deps-build deps-test release deb run test test-build unit fuzz fuzz-build fuzz-long gcc-warnings clean

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

# The Debian package of the release build (CPack, cmake/SluicePackage.cmake; docs/deploy.md).
deb: release
	@rm -f $(DEB_DIR)/sluice_*.deb
	@cpack --config $(RELEASE_DIR)/CPackConfig.cmake -G DEB -B $(DEB_DIR) >/dev/null
	@ls $(DEB_DIR)/sluice_*.deb

# Starts the server: with the embedded default configuration, or CONFIG=path/to/sluice.yaml.
run: release
	./$(RELEASE_DIR)/server/sluice $(if $(CONFIG),--config $(CONFIG))

test-build: deps-test
	@$(SANITIZE_CMAKE) >/dev/null
	@cmake --build $(TEST_DIR) -j$(JOBS)

# The sanitizer build (warnings as errors) and the whole suite through CTest.
test: test-build
	cd $(TEST_DIR) && ctest --output-on-failure -j$(TEST_JOBS)

# Only the unit tests (fast).
unit: test-build
	cd $(TEST_DIR) && ctest --output-on-failure -j$(JOBS) -L unit

fuzz-build: test-build

# Every seed corpus replayed, then FUZZ_BUDGET seconds of fuzzing split evenly between the targets.
fuzz: fuzz-build
	tools/run-fuzzers.sh --budget $(FUZZ_BUDGET) $(TEST_DIR)

# The long campaign whose results docs/testing.md keeps: FUZZ_LONG_SECONDS of CPU for every
# target; what adds coverage joins the seed corpora where small; the table is in
# $(TEST_DIR)/fuzz-long/report.md.
fuzz-long: fuzz-build
	tools/fuzz-long.sh --keep-corpus $(FUZZ_LONG_SECONDS) $(TEST_DIR)

# gcc's warnings as errors on every product file of the sanitizer build, compiled at -O0 through
# ccache (tools/gcc-warnings.sh): the compiler the release build and `make run` use stays clean.
gcc-warnings: test-build
	tools/gcc-warnings.sh $(TEST_DIR)

clean:
	rm -rf build
