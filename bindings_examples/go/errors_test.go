package mrt_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

func TestErrorsMatchTheirCodeWithIsAndAs(t *testing.T) {
	_, err := mrt.LoadModel("/nonexistent/dir/mlp.popef")
	wantError(t, err, mrt.NotFound, "/nonexistent/dir/mlp.popef")
	if errors.Is(err, mrt.InvalidArgument) || errors.Is(err, mrt.ErrClosed) {
		t.Fatalf("%v matches another code", err)
	}
	if !strings.HasPrefix(err.Error(), "MRT_NOT_FOUND") || mrt.NotFound.Error() != "MRT_NOT_FOUND: not found" {
		t.Fatalf("Error() = %q, code %q", err.Error(), mrt.NotFound.Error())
	}
	wrapped := fmt.Errorf("serving: %w", err)
	var mrtErr *mrt.Error
	if !errors.Is(wrapped, mrt.NotFound) || !errors.As(wrapped, &mrtErr) || mrtErr.Recovery != mrt.RecoveryNone {
		t.Fatalf("a wrapped error lost its code: %v", wrapped)
	}
	wantError(t, mrt.CheckVersion(mrt.Major+1, 0), mrt.VersionMismatch, fmt.Sprint(mrt.Major+1))
	if err := mrt.CheckVersion(mrt.Major, mrt.Minor); err != nil {
		t.Fatal(err)
	}
}

func TestUseAfterCloseIsAnError(t *testing.T) {
	model := loadModel(t)
	runner := newRunner(t, model)
	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	if err != nil {
		t.Fatal(err)
	}
	// Closing the model first is allowed: the runner keeps what it needs.
	model.Close()
	model.Close()
	if _, err := model.TensorData("w1"); !errors.Is(err, mrt.ErrClosed) || !errors.Is(err, mrt.FailedPrecondition) {
		t.Fatalf("TensorData after Close: %v", err)
	}
	_, err = mrt.NewModelRunner(model, nil)
	wantError(t, err, mrt.FailedPrecondition, "Model used after Close")
	probs(t, runner, image(1))
	runner.Close()
	runner.Close()
	_, err = runner.Execute(testContext(t), map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	wantError(t, err, mrt.FailedPrecondition, "ModelRunner used after Close")
	// The future outlives its runner: done or cancelled, never a crash.
	if _, err := future.Wait(testContext(t)); err != nil {
		wantError(t, err, mrt.Cancelled, "")
	}
	future.Close()
	_, err = future.Wait(testContext(t))
	wantError(t, err, mrt.FailedPrecondition, "Future used after Close")
	wantError(t, future.OnReady(func(mrt.Code) {}), mrt.FailedPrecondition, "Future used after Close")
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
	level := mrt.GetLogLevel()
	if err := mrt.SetLogLevel(mrt.LogDebug); err != nil || mrt.GetLogLevel() != mrt.LogDebug {
		t.Fatalf("SetLogLevel: %v, level %v", err, mrt.GetLogLevel())
	}
	mrt.SetLogLevel(level)
}

// Goroutines hop between OS threads; each error must still be the one of its
// own call (the message is read on the failing call's thread).
func TestConcurrentGoroutinesGetTheirOwnErrors(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	const goroutines, rounds = 8, 30
	var wg sync.WaitGroup
	failures := make(chan string, goroutines*rounds)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			name := fmt.Sprintf("extra_%d", g)
			for r := 0; r < rounds; r++ {
				_, err := runner.Execute(context.Background(), map[string]mrt.Tensor{
					"image": mrt.NewTensor(image(1)), name: mrt.NewTensor(image(1))})
				var mrtErr *mrt.Error
				if !errors.As(err, &mrtErr) || mrtErr.Code != mrt.NotFound || !strings.Contains(mrtErr.Message, "'"+name+"'") {
					failures <- fmt.Sprintf("goroutine %d got %v", g, err)
				}
				runtime.Gosched()
				if _, err := runner.Execute(context.Background(), map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))}); err != nil {
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
