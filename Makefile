# Thin wrapper: every target installs what it needs (scripts/install-deps), configures and builds.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo bench fuzz clean python

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	scripts/oracle-venv $(BUILD)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The Python package for Debian's python3 (scripts/install-python; PYTHON_SITE=DIR installs elsewhere).
python: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target voxlabel_shared
	scripts/install-python $(BUILD) $(PYTHON_SITE)

demo: build
	scripts/demo $(BUILD)/voxlabel

bench: build
	bench/run $(BUILD)

fuzz: deps
	fuzz/run.sh

clean:
	rm -rf $(BUILD)
