package mrt_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

func TestDescriptionsAndModelInfoComeFromTheModel(t *testing.T) {
	model := loadModel(t)
	runner := newRunner(t, model)
	in, out := runner.Inputs(), runner.Outputs()
	if len(in) != 1 || in[0].Name != "image" || in[0].SizeInBytes != imageSize*4 || in[0].DataType != mrt.F32 ||
		fmt.Sprint(in[0].Shape) != "[1 784]" {
		t.Fatalf("inputs %+v", in)
	}
	if len(out) != 1 || out[0].Name != "probs" || out[0].SizeInBytes != classes*4 {
		t.Fatalf("outputs %+v", out)
	}
	all, err := runner.ModelInputs()
	if err != nil || len(all) != 5 { // image and the four weights
		t.Fatalf("model inputs %+v, %v", all, err)
	}
	info, err := model.Info()
	if err != nil || info.Executable != "mlp" || info.NumAnchors != 6 || info.NumTensorData != 4 {
		t.Fatalf("info %+v, %v", info, err)
	}
	anchor, err := model.AnchorByName("image")
	if err != nil || anchor.TensorType != mrt.TensorInput || anchor.DataType != mrt.F32 || anchor.SizeInBytes != imageSize*4 {
		t.Fatalf("anchor %+v, %v", anchor, err)
	}
	_, err = model.AnchorByName("imagez")
	wantError(t, err, mrt.NotFound, "imagez")
	main, err := model.ProgramFlow(mrt.PhaseMain)
	if err != nil || len(main) == 0 {
		t.Fatalf("main programs %v, %v", main, err)
	}
	b2, err := model.TensorData("b2")
	if err != nil || len(b2) != classes*4 {
		t.Fatalf("b2: %v, %d bytes", err, len(b2))
	}
	_, err = model.TensorData("w3")
	wantError(t, err, mrt.NotFound, "'w3'")
	// The model survives a round trip through memory.
	bytes, err := model.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	copyOf, err := mrt.LoadModelFromMemory(bytes)
	if err != nil {
		t.Fatal(err)
	}
	defer copyOf.Close()
	if copyInfo, _ := copyOf.Info(); copyInfo.Executable != "mlp" {
		t.Fatalf("model from memory: %+v", copyInfo)
	}
}

func TestWrongTypesNamesAndSizesAreRefused(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	ctx := testContext(t)
	run := func(inputs map[string]mrt.Tensor) error {
		_, err := runner.Execute(ctx, inputs)
		return err
	}
	wantError(t, run(map[string]mrt.Tensor{"image": mrt.NewTensor(make([]float64, imageSize))}), mrt.InvalidArgument,
		"input 'image' is F64, the model takes F32")
	wantError(t, run(map[string]mrt.Tensor{"image": mrt.NewTensor(image(1)[:imageSize-1])}), mrt.InvalidArgument,
		"'image' has 3132 bytes, expected 3136")
	wantError(t, run(map[string]mrt.Tensor{"imagez": mrt.NewTensor(image(1))}), mrt.NotFound, "(missing: image)")
	wantError(t, run(map[string]mrt.Tensor{"image": mrt.NewTensor(image(1)), "label": mrt.NewTensor(image(1))}),
		mrt.NotFound, "'label'")
	// The runner keeps serving after the errors.
	var total float64
	for _, p := range probs(t, runner, image(1)) {
		total += float64(p)
	}
	if math.Abs(total-1) > 1e-5 {
		t.Fatalf("softmax sums to %v", total)
	}
}

func TestEveryElementTypeRoundTripsThroughATensor(t *testing.T) {
	check := func(tensor mrt.Tensor, want mrt.DataType, size int) {
		t.Helper()
		if tensor.Type != want || len(tensor.Data) != 3*size || want.Size() != size {
			t.Fatalf("%v tensor of %d bytes, want %v of %d", tensor.Type, len(tensor.Data), want, 3*size)
		}
	}
	check(mrt.NewTensor([]bool{true, false, true}), mrt.Bool, 1)
	check(mrt.NewTensor([]uint8{1, 2, 3}), mrt.U8, 1)
	check(mrt.NewTensor([]int8{-1, 2, 3}), mrt.S8, 1)
	check(mrt.NewTensor([]uint16{1, 2, 3}), mrt.U16, 2)
	check(mrt.NewTensor([]int16{-1, 2, 3}), mrt.S16, 2)
	check(mrt.NewTensor([]int32{-1, 2, 3}), mrt.S32, 4)
	check(mrt.NewTensor([]uint32{1, 2, 3}), mrt.U32, 4)
	check(mrt.NewTensor([]int64{-1, 2, 3}), mrt.S64, 8)
	check(mrt.NewTensor([]uint64{1, 2, 3}), mrt.U64, 8)
	check(mrt.NewTensor([]mrt.Float16{0x3c00, 0, 0xbc00}), mrt.F16, 2)
	check(mrt.NewTensor([]float32{1, 2, 3}), mrt.F32, 4)
	check(mrt.NewTensor([]float64{1, 2, 3}), mrt.F64, 8)
	values, err := mrt.Values[int16](mrt.NewTensor([]int16{-7, 8, 9}))
	if err != nil || fmt.Sprint(values) != "[-7 8 9]" {
		t.Fatalf("values %v, %v", values, err)
	}
	_, err = mrt.Values[float32](mrt.NewTensor([]int32{1}))
	wantError(t, err, mrt.InvalidArgument, "the tensor holds S32, not F32")
	_, err = mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: make([]byte, 6)})
	wantError(t, err, mrt.InvalidArgument, "6 bytes")
	if z := mrt.Zeros(mrt.S16, 2, 3); len(z.Data) != 12 || z.Type != mrt.S16 {
		t.Fatalf("zeros %+v", z)
	}
}

func TestAsyncEqualsSyncAndStatisticsCountRequests(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	want := probs(t, runner, image(0.5))
	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image(0.5))})
	if err != nil {
		t.Fatal(err)
	}
	defer future.Close()
	select {
	case <-future.Done():
	case <-time.After(time.Minute):
		t.Fatal("the request did not finish")
	}
	outputs, err := future.Wait(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := mrt.Values[float32](outputs["probs"])
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(outputs["probs"].Shape) != "[1 10]" {
		t.Fatalf("async %v %v, sync %v", got, outputs["probs"].Shape, want)
	}
	counts, err := runner.Count(0)
	if err != nil || counts.Request != 2 {
		t.Fatalf("counts %+v, %v", counts, err)
	}
	mean, err := runner.Mean(0)
	if err != nil || mean.Request <= 0 || mean.Computation <= 0 {
		t.Fatalf("mean %+v, %v", mean, err)
	}
	if _, err := runner.Percentile(0.5, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.TimeTrace(0, -1); err != nil {
		t.Fatal(err)
	}
	_, err = runner.TimeTrace(0, -2)
	wantError(t, err, mrt.InvalidArgument, "-2")
	_, err = runner.Mean(7)
	wantError(t, err, mrt.InvalidArgument, "7")
}

func TestAnEndedContextEndsTheWaitNotTheRequest(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runner.Execute(ctx, map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, mrt.Cancelled) {
		t.Fatalf("a cancelled context gave %v", err)
	}
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	_, err = runner.Execute(expired, map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, mrt.DeadlineExceeded) {
		t.Fatalf("an expired context gave %v", err)
	}
	probs(t, runner, image(1)) // the runner serves on
}

func TestClosingPendingFuturesAndFinalizersAreSafe(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	for i := 0; i < 20; i++ {
		future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image(float32(i)))})
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

func TestOnReadyPanicIsRecovered(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	if err != nil {
		t.Fatal(err)
	}
	defer future.Close()
	before := mrt.CaughtCallbackPanics()
	if err := future.OnReady(func(mrt.Code) { panic("deliberate panic in OnReady") }); err != nil {
		t.Fatal(err)
	}
	if _, err := future.Wait(testContext(t)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mrt.CaughtCallbackPanics() == before {
		if time.Now().After(deadline) {
			t.Fatal("the panic in OnReady was not recovered")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestASimulatedDeviceErrorCarriesItsRecoveryAction(t *testing.T) {
	runner := newRunner(t, loadModel(t))
	exe, err := loadModel(t).Executable()
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	// The last compute step of the executable runs in Main (Load only fetches the weights).
	info, err := exe.Info()
	if err != nil {
		t.Fatal(err)
	}
	var step mrt.StepInfo
	for i := 0; i < info.NumSteps; i++ {
		if s, err := exe.Step(i); err == nil && s.Kind == "Execute" {
			step = s
		}
	}
	wantError(t, runner.InsertSimulatedError(mrt.SimulatedHostLinkError, "no such step", 0), mrt.NotFound, "no such step")
	if err := runner.InsertSimulatedError(mrt.SimulatedHostLinkError, step.Name, 0); err != nil {
		t.Fatal(err)
	}
	_, err = runner.Execute(testContext(t), map[string]mrt.Tensor{"image": mrt.NewTensor(image(1))})
	var mrtErr *mrt.Error
	if !errors.As(err, &mrtErr) || mrtErr.Code != mrt.DeviceError || mrtErr.Recovery != mrt.RecoveryFullReset {
		t.Fatalf("want a DeviceError needing a full reset, got %v (%+v)", err, mrtErr)
	}
}

func TestTheRunnerRunsWithItsOptions(t *testing.T) {
	model := loadModel(t)
	runner, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{DeviceWait: mrt.For(time.Minute),
		FlushTimeout: mrt.For(2 * time.Second), RequestTracepoints: 10, AutoReset: true,
		BatchingDim: new(uint32), BatchSizeTimeout: mrt.For(3 * time.Millisecond),
		DataParallelTimeout: mrt.For(4 * time.Millisecond), SkipIOValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	config, err := runner.Config()
	if err != nil || config.Replicas != 1 || !config.ThreadSafe || !config.AutoReset || config.RequestTracepoints != 10 ||
		config.FlushTimeout == nil || *config.FlushTimeout != 2*time.Second || config.ValidateIO ||
		config.BatchingDim != 0 || config.BatchSizeTimeout == nil || *config.BatchSizeTimeout != 3*time.Millisecond ||
		config.DataParallelTimeout == nil || *config.DataParallelTimeout != 4*time.Millisecond {
		t.Fatalf("config %+v, %v", config, err)
	}
	forever := newRunner(t, model)
	if config, err := forever.Config(); err != nil || config.FlushTimeout != nil || !config.ValidateIO ||
		config.BatchSizeTimeout != nil || config.DataParallelTimeout != nil {
		t.Fatalf("a runner without FlushTimeout: %+v, %v", config, err)
	}
}
