package mrt_test

// Misuse through the binding: each mistake is an *mrt.Error with the right
// code and a message naming the bad value, never a crash. The tests need the
// mlp example model: MRT_TEST_MODEL=<path to mlp.popef> (tests/bindings/go
// sets it).

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"mrt.example/mlp/mrt"
)

const (
	imageSize = 784
	classes   = 10
)

func loadModel(t *testing.T) *mrt.Model {
	t.Helper()
	path := os.Getenv("MRT_TEST_MODEL")
	if path == "" {
		t.Fatal("MRT_TEST_MODEL must name the mlp example model (mrt-gen mlp -o mlp.popef)")
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
	runner, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{DeviceWait: time.Minute})
	if err != nil {
		t.Fatalf("creating a runner: %v", err)
	}
	t.Cleanup(func() { runner.Close() })
	return runner
}

// wantError checks err is an *mrt.Error with code whose message contains needle.
func wantError(t *testing.T, err error, code mrt.Code, needle string) {
	t.Helper()
	var mrtErr *mrt.Error
	if !errors.As(err, &mrtErr) {
		t.Fatalf("want an *mrt.Error %v mentioning %q, got %v", code, needle, err)
	}
	if mrtErr.Code != code || !strings.Contains(mrtErr.Message, needle) {
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

func TestDescriptionsComeFromTheModel(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	in, out := runner.Inputs(), runner.Outputs()
	if len(in) != 1 || in[0].Name != "image" || in[0].SizeInBytes != 784*4 || fmt.Sprint(in[0].Shape) != "[1 784]" {
		t.Fatalf("inputs %+v", in)
	}
	if len(out) != 1 || out[0].Name != "probs" || out[0].SizeInBytes != 40 {
		t.Fatalf("outputs %+v", out)
	}
}

func TestMissingFileIsNotFoundNamingIt(t *testing.T) {
	_, err := mrt.LoadModel("/nonexistent/dir/mlp.popef")
	wantError(t, err, mrt.NotFound, "/nonexistent/dir/mlp.popef")
	if !strings.HasPrefix(err.Error(), "MRT_NOT_FOUND") {
		t.Fatalf("Error() = %q", err.Error())
	}
}

func TestUnknownTensorDataIsNotFound(t *testing.T) {
	model := loadModel(t)
	_, err := model.TensorData("w3")
	wantError(t, err, mrt.NotFound, "'w3'")
	b2, err := model.TensorData("b2")
	if err != nil || len(b2) != classes {
		t.Fatalf("b2: %v, %d values", err, len(b2))
	}
}

func TestWrongNamesGiveTheLibraryMessage(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	probs := make([]float32, classes)
	out := map[string][]float32{"probs": probs}
	wantError(t, runner.Execute(map[string][]float32{"imagez": image(1)}, out), mrt.NotFound, "(missing: image)")
	wantError(t, runner.Execute(map[string][]float32{"image": image(1), "label": image(1)}, out), mrt.NotFound, "'label'")
	_, err := runner.ExecuteAsync(map[string][]float32{"image": image(1), "label": image(1)})
	wantError(t, err, mrt.NotFound, "'label'")
	// The runner keeps serving after the errors.
	if err := runner.Execute(map[string][]float32{"image": image(1)}, out); err != nil {
		t.Fatal(err)
	}
	var total float32
	for _, p := range probs {
		total += p
	}
	if math.Abs(float64(total)-1) > 1e-5 {
		t.Fatalf("softmax sums to %v", total)
	}
}

func TestWrongSizesAreRefusedBeforeCallingC(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	out := map[string][]float32{"probs": make([]float32, classes)}
	wantError(t, runner.Execute(map[string][]float32{"image": image(1)[:imageSize-1]}, out), mrt.InvalidArgument, "'image' has 783 float32 (3132 bytes), expected 3136")
	wantError(t, runner.Execute(map[string][]float32{"image": image(1)}, map[string][]float32{"probs": make([]float32, 9)}), mrt.InvalidArgument, "'probs' has 9 float32")
	two := append(image(1), image(1)...)
	wantError(t, runner.Execute(map[string][]float32{"image": two}, out), mrt.InvalidArgument, "'probs' holds 1 batches but 'image' holds 2")
	_, err := runner.ExecuteAsync(map[string][]float32{"image": nil})
	wantError(t, err, mrt.InvalidArgument, "'image' has 0 float32")
}

func TestAsyncOutputsEqualSyncOutputs(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	in := map[string][]float32{"image": image(0.5)}
	probs := make([]float32, classes)
	if err := runner.Execute(in, map[string][]float32{"probs": probs}); err != nil {
		t.Fatal(err)
	}
	future, err := runner.ExecuteAsync(in)
	if err != nil {
		t.Fatal(err)
	}
	defer future.Close()
	in["image"][0] = 99 // the request owns a copy: changing the caller's slice cannot matter
	outputs, err := future.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outputs["probs"]) != fmt.Sprint(probs) || len(outputs) != 1 {
		t.Fatalf("async %v, sync %v", outputs, probs)
	}
	if ready, err := future.WaitTimeout(0); !ready || err != nil || !future.IsReady() {
		t.Fatalf("a finished future: ready %v, %v", ready, err)
	}
}

func TestUseAfterCloseIsAnError(t *testing.T) {
	model := loadModel(t)
	runner := newRunner(t, model)
	future, err := runner.ExecuteAsync(map[string][]float32{"image": image(1)})
	if err != nil {
		t.Fatal(err)
	}
	// Closing the model first is allowed: the runner keeps what it needs.
	model.Close()
	model.Close()
	if _, err := model.TensorData("w1"); !errors.Is(err, mrt.ErrClosed) {
		t.Fatalf("TensorData after Close: %v", err)
	}
	_, err = mrt.NewModelRunner(model, nil)
	wantError(t, err, mrt.FailedPrecondition, "Model used after Close")
	out := map[string][]float32{"probs": make([]float32, classes)}
	if err := runner.Execute(map[string][]float32{"image": image(1)}, out); err != nil {
		t.Fatalf("the runner should outlive its closed model: %v", err)
	}
	runner.Close()
	runner.Close()
	wantError(t, runner.Execute(map[string][]float32{"image": image(1)}, out), mrt.FailedPrecondition, "ModelRunner used after Close")
	_, err = runner.ExecuteAsync(map[string][]float32{"image": image(1)})
	wantError(t, err, mrt.FailedPrecondition, "ModelRunner used after Close")
	// The future outlives its runner: done or cancelled, never a crash.
	if _, err := future.Wait(); err != nil {
		wantError(t, err, mrt.Cancelled, "")
	}
	future.Close()
	_, err = future.Wait()
	wantError(t, err, mrt.FailedPrecondition, "Future used after Close")
	wantError(t, future.OnReady(func(mrt.Code) {}), mrt.FailedPrecondition, "Future used after Close")
	if future.IsReady() {
		t.Fatal("a closed future reports ready")
	}
}

func TestClosingPendingFuturesAndFinalizersAreSafe(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	for i := 0; i < 20; i++ {
		future, err := runner.ExecuteAsync(map[string][]float32{"image": image(float32(i))})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			future.Close() // pending: the library still completes and frees the request
		} // odd ones are left to their finalizers
	}
	runtime.GC()
	runtime.GC()
}

func TestOnReadyRunsOnceAndAPanicIsRecovered(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	future, err := runner.ExecuteAsync(map[string][]float32{"image": image(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer future.Close()
	before := mrt.CaughtCallbackPanics()
	if err := future.OnReady(func(mrt.Code) { panic("deliberate panic in OnReady") }); err != nil {
		t.Fatal(err)
	}
	ready := make(chan mrt.Code, 2)
	if err := future.OnReady(func(status mrt.Code) { ready <- status }); err != nil {
		t.Fatal(err)
	}
	if _, err := future.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case status := <-ready:
		if status != mrt.OK {
			t.Fatalf("OnReady got %v", status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnReady was not called")
	}
	deadline := time.Now().Add(10 * time.Second)
	for mrt.CaughtCallbackPanics() == before {
		if time.Now().After(deadline) {
			t.Fatal("the panic in OnReady was not recovered")
		}
		time.Sleep(time.Millisecond)
	}
	// Registered on a finished future: runs at once, on this goroutine's thread.
	if err := future.OnReady(func(status mrt.Code) { ready <- status }); err != nil {
		t.Fatal(err)
	}
	if len(ready) != 1 {
		t.Fatal("OnReady on a finished future did not run at once")
	}
}

func TestLogCallbackReceivesMessagesAndSurvivesAPanic(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	err := mrt.SetLogCallback(func(level mrt.LogLevel, message string) {
		if strings.Contains(message, "panic please") {
			panic("deliberate panic in a log callback")
		}
		mu.Lock()
		lines = append(lines, fmt.Sprintf("%d %s", level, message))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	before := mrt.CaughtCallbackPanics()
	for _, message := range []string{"hello from the Go binding", "panic please", "still alive"} {
		if err := mrt.LogMessage(mrt.LogErr, message); err != nil {
			t.Fatal(err)
		}
	}
	if err := mrt.SetLogCallback(nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	joined := strings.Join(lines, "\n")
	mu.Unlock()
	if !strings.Contains(joined, "1 hello from the Go binding") || !strings.Contains(joined, "still alive") {
		t.Fatalf("log lines: %q", joined)
	}
	if mrt.CaughtCallbackPanics() == before {
		t.Fatal("the panic in the log callback was not recovered")
	}
	wantError(t, mrt.LogMessage(mrt.LogOff, "x"), mrt.InvalidArgument, "")
	wantError(t, mrt.SetLogLevel(42), mrt.InvalidArgument, "42")
}

// Goroutines hop between OS threads; each error must still be the one of its
// own call (the message is read in the same cgo call as the failure).
func TestConcurrentGoroutinesGetTheirOwnErrors(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	const goroutines, rounds = 8, 40
	var wg sync.WaitGroup
	failures := make(chan string, goroutines*rounds)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			name := fmt.Sprintf("extra_%d", g)
			for r := 0; r < rounds; r++ {
				out := map[string][]float32{"probs": make([]float32, classes)}
				err := runner.Execute(map[string][]float32{"image": image(1), name: image(1)}, out)
				var mrtErr *mrt.Error
				if !errors.As(err, &mrtErr) || mrtErr.Code != mrt.NotFound || !strings.Contains(mrtErr.Message, "'"+name+"'") {
					failures <- fmt.Sprintf("goroutine %d got %v", g, err)
				}
				runtime.Gosched()
				if err := runner.Execute(map[string][]float32{"image": image(1)}, out); err != nil {
					failures <- fmt.Sprintf("goroutine %d: a good request failed: %v", g, err)
				}
			}
		}(g)
	}
	wg.Wait()
	close(failures)
	for failure := range failures {
		t.Error(failure)
	}
}
