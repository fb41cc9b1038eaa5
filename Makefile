# Polygraph top-level entry points. `make demo` and `make test` work on a fresh Debian 12 machine.
SHELL := /bin/bash
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PACKAGES := cmake ninja-build ccache g++ pkg-config protobuf-compiler libprotobuf-dev \
            nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev \
            libre2-dev libonnx-testdata python3 python3-numpy
FUZZ_PACKAGES := clang libclang-rt-14-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CTEST_ARGS ?=

.PHONY: setup build test demo bench fuzz clean format

setup:
	@./tools/install_packages.sh $(PACKAGES)
	@./tools/install_onnxruntime.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: setup build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo: setup build
	./tools/demo.sh $(BUILD_DIR)

bench: setup build
	./bench/run_all.sh $(BUILD_DIR)

fuzz: setup
	@./tools/install_packages.sh $(FUZZ_PACKAGES)
	./tools/fuzz.sh $(or $(FUZZ_SECONDS),60) $(or $(FUZZ_TARGET),load_model_fuzz)

format:
	find src tests bench tools -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) build-fuzz
