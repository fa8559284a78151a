package mrt_test

// Shared by the tests: they need the mlp example model,
// MRT_TEST_MODEL=<path to mlp.popef> (tests/bindings/go sets it), and
// replicas_test.go the replicated one, MRT_TEST_REPLICATED_MODEL.

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

const (
	imageSize = 784
	classes   = 10
)

func loadModel(t *testing.T) *mrt.Model {
	t.Helper()
	return loadModelNamedBy(t, "MRT_TEST_MODEL", "mlp")
}

// loadModelNamedBy loads the example model `name` (mrt-gen name -o
// name.popef) from the path in environment variable `variable`.
func loadModelNamedBy(t *testing.T, variable, name string) *mrt.Model {
	t.Helper()
	path := os.Getenv(variable)
	if path == "" {
		t.Fatalf("%s must name the %s example model (mrt-gen %s -o %s.popef)", variable, name, name, name)
	}
	model, err := mrt.LoadModel(path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	t.Cleanup(func() { model.Close() })
	return model
}

func newRunner(t *testing.T, model *mrt.Model) *mrt.ModelRunner {
	t.Helper()
	runner, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{DeviceWait: mrt.For(time.Minute)})
	if err != nil {
		t.Fatalf("creating a runner: %v", err)
	}
	t.Cleanup(func() { runner.Close() })
	return runner
}

// testContext ends with the test's deadline margin: no test waits forever.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// wantError checks err is an *mrt.Error with code whose message contains
// needle, and that errors.Is matches the code's sentinel.
func wantError(t *testing.T, err error, code mrt.Code, needle string) {
	t.Helper()
	var mrtErr *mrt.Error
	if !errors.As(err, &mrtErr) {
		t.Fatalf("want an *mrt.Error %v mentioning %q, got %v", code, needle, err)
	}
	if mrtErr.Code != code || !strings.Contains(mrtErr.Message, needle) || !errors.Is(err, code) {
		t.Fatalf("want %v mentioning %q, got %v", code, needle, err)
	}
}

func image(value float32) []float32 {
	data := make([]float32, imageSize)
	for i := range data {
		data[i] = value * float32(i%7) / 7
	}
	return data
}

// probs runs one image through the runner.
func probs(t *testing.T, runner *mrt.ModelRunner, in []float32) []float32 {
	t.Helper()
	outputs, err := runner.Execute(testContext(t), map[string]mrt.Tensor{"image": mrt.NewTensor(in, 1, imageSize)})
	if err != nil {
		t.Fatal(err)
	}
	values, err := mrt.Values[float32](outputs["probs"])
	if err != nil || len(values) != classes {
		t.Fatalf("probs: %v, %d values", err, len(values))
	}
	return values
}
