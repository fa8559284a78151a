package mrt_test

import (
	"sync"
	"testing"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

// runnerChoosing is a runner timing out every 2 ms while idle that pads
// what choose adds, once it was asked calls times; and the tensors it was
// asked for.
func runnerChoosing(t *testing.T, model *mrt.Model, calls int, choose func(*mrt.FlushSelection) error) (*mrt.ModelRunner, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	var failed error
	runner, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{DeviceWait: mrt.For(time.Minute),
		FlushTimeout: mrt.For(2 * time.Millisecond), RingBufferSizeMultiplier: 1,
		OnFlushSelect: func(tensor string, selection *mrt.FlushSelection) {
			err := choose(selection)
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, tensor)
			if err != nil && failed == nil {
				failed = err
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	read := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
	for deadline := time.Now().Add(10 * time.Second); len(read()) < calls; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("OnFlushSelect was called %d times in 10 s", len(read()))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		t.Fatal(failed)
	}
	return runner, read
}

func TestFlushSelectNamingEveryQueueLetsTheDeviceGoOn(t *testing.T) {
	model := loadModel(t)
	want := probs(t, newRunner(t, model), image(1))
	runner, asked := runnerChoosing(t, model, 3, func(selection *mrt.FlushSelection) error {
		if err := selection.AddInput("image"); err != nil {
			return err
		}
		return selection.AddOutput("probs")
	})
	got := probs(t, runner, image(1))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("probs %v after padding, want %v", got, want)
		}
	}
	for _, tensor := range asked() {
		if tensor != "image" {
			t.Fatalf("asked for %q, the device waits for image", tensor)
		}
	}
}

// Only probs padded: the device, still waiting for image, never runs on
// padding, so a request's own output entry sits behind the padded one and
// the request is still pending when the runner goes.
func TestFlushSelectPadsOnlyTheNamedQueues(t *testing.T) {
	model := loadModel(t)
	runner, _ := runnerChoosing(t, model, 1, func(selection *mrt.FlushSelection) error {
		return selection.AddOutput("probs")
	})
	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image(1), 1, imageSize)})
	if err != nil {
		t.Fatal(err)
	}
	defer future.Close()
	select {
	case <-future.Done():
		t.Fatal("the request was served on padding")
	case <-time.After(200 * time.Millisecond):
	}
	runner.Close()
	<-future.Done()
	_, err = future.Wait(testContext(t))
	wantError(t, err, mrt.Cancelled, "")
}

func TestFlushSelectMisuse(t *testing.T) {
	model := loadModel(t)
	var mu sync.Mutex
	var kept *mrt.FlushSelection
	runner, _ := runnerChoosing(t, model, 1, func(selection *mrt.FlushSelection) error {
		mu.Lock()
		defer mu.Unlock()
		kept = selection
		return nil
	})
	runner.Close()
	mu.Lock()
	defer mu.Unlock()
	wantError(t, kept.AddInput("image"), mrt.InvalidArgument, "valid only during the OnFlushSelect call")
	_, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{OnFlush: func(string) {},
		OnFlushSelect: func(string, *mrt.FlushSelection) {}})
	wantError(t, err, mrt.InvalidArgument, "OnFlush and OnFlushSelect are both set")
	// A name that is no queue: the library logs it and pads every queue.
	runner, _ = runnerChoosing(t, model, 3, func(selection *mrt.FlushSelection) error {
		return selection.AddInput("nope")
	})
	if got := probs(t, runner, image(1)); len(got) != classes {
		t.Fatalf("probs %v", got)
	}
}
