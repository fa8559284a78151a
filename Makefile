# The two commands of README.md, plus a few conveniences. Everything goes
# through the CMake presets (CMakePresets.json); PRESET picks one.
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: all deps build demo test bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET) -j$(JOBS)

demo: build
	@mkdir -p $(BUILD)/demo
	@$(BUILD)/tools/mrt-gen/mrt-gen mlp -o $(BUILD)/demo/mlp.popef
	@$(BUILD)/tools/mrt-demo/mrt-demo $(BUILD)/demo/mlp.popef
	@echo
	@echo "Serving it: mrt-run, 2000 requests on the simulated IPU through ModelRunner"
	@$(BUILD)/tools/mrt-run/mrt-run $(BUILD)/demo/mlp.popef --iterations 2000
	@echo
	@echo "A real ONNX model (the ONNX model zoo's MNIST CNN) compiled for a GC200 and served"
	@$(BUILD)/tools/mrt-compile/mrt-compile tests/data/onnx/mnist-8/model.onnx -o $(BUILD)/demo/mnist-8.popef
	@echo
	@$(BUILD)/tools/mrt-run/mrt-run $(BUILD)/demo/mnist-8.popef --iterations 2000 \
	  --input Input3=tests/data/onnx/mnist-8/test_data_set_0/input_0.pb

test: build
	@ctest --preset $(PRESET) -j$(JOBS)

bench: build
	@for b in $$(find $(BUILD)/bench -type f -name 'bench_*' -perm -u+x); do echo "== $$b"; $$b; done

install: build
	@cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	@rm -rf build
