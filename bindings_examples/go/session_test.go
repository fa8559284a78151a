package mrt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

// userAnchor is the handle of the one anchor of set.
func userAnchor(t *testing.T, session *mrt.Session, set mrt.AnchorSet) string {
	t.Helper()
	anchors, err := session.Anchors(set)
	if err != nil || len(anchors) != 1 {
		t.Fatalf("anchors of set %d: %+v, %v", set, anchors, err)
	}
	return anchors[0].Handle
}

func newBoundSession(t *testing.T, model *mrt.Model) *mrt.Session {
	t.Helper()
	session, err := mrt.NewSession(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	manager, err := mrt.NewDeviceManager()
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	device, err := manager.GetDevice(testContext(t), mrt.DeviceRequest{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer device.Close() // the session keeps its own reference
	if err := session.BindToDevice(device); err != nil {
		t.Fatal(err)
	}
	return session
}

func TestSessionCallbacksComputeWhatTheRunnerDoes(t *testing.T) {
	model := loadModel(t)
	want := probs(t, newRunner(t, model), image(0.25))
	session := newBoundSession(t, model)
	imageHandle := userAnchor(t, session, mrt.UserInputAnchors)
	userAnchor(t, session, mrt.UserOutputAnchors)
	main, err := model.ProgramFlow(mrt.PhaseMain)
	if err != nil {
		t.Fatal(err)
	}
	unbound, err := session.AnchorsNotConnected(main...)
	if err != nil || len(unbound) != 2 {
		t.Fatalf("unbound anchors %+v, %v", unbound, err)
	}
	wantError(t, session.ErrorIfAnchorsNotConnected(main...), mrt.FailedPrecondition, imageHandle)

	input := mrt.NewTensor(image(0.25))
	if err := session.SetCallbackForAnchor(imageHandle, func(buffer []byte) { copy(buffer, input.Data) }); err != nil {
		t.Fatal(err)
	}
	var got []float32
	// The output's callback comes from a factory, for the anchors a predicate picks.
	onlyMain, err := mrt.NewPrebuiltPredicate(mrt.PredicateAnchorCallback, mrt.PredProgramFlowMain, model, nil,
		mrt.BindUserCallback, mrt.SkipCallback)
	if err != nil {
		t.Fatal(err)
	}
	defer onlyMain.Close()
	var asked []string
	err = session.SetUserOutputHandler(func(anchor mrt.AnchorInfo) mrt.AnchorCallback {
		asked = append(asked, anchor.Name)
		return func(buffer []byte) {
			values, _ := mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: append([]byte(nil), buffer...)})
			got = values
		}
	}, onlyMain, false)
	if err != nil || fmt.Sprint(asked) != "[probs]" {
		t.Fatalf("output handler asked for %v: %v", asked, err)
	}
	if err := session.ErrorIfAnchorsNotConnected(main...); err != nil {
		t.Fatal(err)
	}
	if err := session.RunMainPrograms(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("session %v, runner %v", got, want)
	}
	wantError(t, session.SetCallbackForAnchor("no_such_anchor", nil), mrt.NotFound, "no_such_anchor")
	if stopped, err := session.IsStopped(); err != nil || stopped {
		t.Fatalf("stopped %v, %v", stopped, err)
	}
	if err := session.Stop(); err != nil {
		t.Fatal(err)
	}
	wantError(t, session.RunMainPrograms(testContext(t)), mrt.FailedPrecondition, "reload")
	if err := session.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := session.RunMainPrograms(testContext(t)); err != nil {
		t.Fatal(err)
	}

	// A context ending during a run stops it: the input's callback cancels
	// and then, as a callback waiting for data would, gives up once the
	// session is stopped.
	ctx, cancel := context.WithCancel(context.Background())
	err = session.SetCallbackForAnchor(imageHandle, func([]byte) {
		cancel()
		for stopped := false; !stopped; stopped, _ = session.IsStopped() {
			time.Sleep(time.Millisecond)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = session.RunMainPrograms(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, mrt.Cancelled) {
		t.Fatalf("a run whose context ended gave %v", err)
	}
}

func TestPredicatesGiveTheirPolicies(t *testing.T) {
	model := loadModel(t)
	image, err := model.AnchorByName("image")
	if err != nil {
		t.Fatal(err)
	}
	user, err := mrt.NewUserPredicate(mrt.PredicatePopefDataUsage, func(anchor mrt.AnchorInfo) int32 {
		if anchor.Name == "image" {
			return mrt.UseUserData
		}
		return mrt.UsePopefDataIfAny
	})
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	byHandle, err := mrt.NewAnchorPoliciesPredicate(mrt.PredicatePopefDataUsage, map[string]int32{image.Handle: mrt.UseUserData}, mrt.UsePopefDataIfAny)
	if err != nil {
		t.Fatal(err)
	}
	defer byHandle.Close()
	both, err := mrt.AndPredicates(mrt.PredicatePopefDataUsage, mrt.UseUserData, mrt.UsePopefDataIfAny, user, byHandle)
	if err != nil {
		t.Fatal(err)
	}
	defer both.Close()
	for _, p := range []*mrt.AnchorPredicate{user, byHandle, both} {
		if policy, err := p.Evaluate(model, image.Handle); err != nil || policy != mrt.UseUserData {
			t.Fatalf("image: policy %d, %v", policy, err)
		}
	}
	w1, _ := model.AnchorByName("w1")
	if policy, err := both.Evaluate(model, w1.Handle); err != nil || policy != mrt.UsePopefDataIfAny {
		t.Fatalf("w1: policy %d, %v", policy, err)
	}
	_, err = mrt.NewPrebuiltPredicate(7, mrt.PredNonScalarType, nil, nil, 0, 1)
	wantError(t, err, mrt.InvalidArgument, "7")
	_, err = user.Evaluate(model, "nope")
	wantError(t, err, mrt.NotFound, "nope")
	bad, err := mrt.NewUserPredicate(mrt.PredicateAnchorCallback, func(mrt.AnchorInfo) int32 { return 42 })
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	_, err = bad.Evaluate(model, image.Handle)
	wantError(t, err, mrt.InvalidArgument, "42")
	// A session whose inputs all use user data.
	session, err := mrt.NewSession(model, &mrt.SessionOptions{PredTensorData: user})
	if err != nil {
		t.Fatal(err)
	}
	session.Close()
	// Calls after Close, callbacks included, are errors (and leak no handle).
	wantError(t, session.SetCallbackForAnchor(image.Handle, func([]byte) {}), mrt.FailedPrecondition, "Session used after Close")
	wantError(t, session.SetUserInputHandler(func(mrt.AnchorInfo) mrt.AnchorCallback { return nil }, nil, false),
		mrt.FailedPrecondition, "Session used after Close")
	_, err = session.CreateQueueManager(&mrt.QueueOptions{OnTimeout: func(string, mrt.TensorType, int64) {}})
	wantError(t, err, mrt.FailedPrecondition, "Session used after Close")
	queues, err := mrt.NewQueueManager(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := queues.InputQueue("image")
	if err != nil {
		t.Fatal(err)
	}
	queues.Close()
	wantError(t, in.Enqueue(context.Background(), make([]byte, imageSize*4), nil), mrt.FailedPrecondition, "QueueManager used after Close")
}

func TestSessionQueuesCarryTheTensors(t *testing.T) {
	model := loadModel(t)
	want := probs(t, newRunner(t, model), image(2))
	session := newBoundSession(t, model)
	queues, err := session.CreateQueueManager(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer queues.Close()
	inputs, _ := queues.InputNames()
	outputs, _ := queues.OutputNames()
	if fmt.Sprint(inputs, outputs) != "[image] [probs]" {
		t.Fatalf("queues %v %v", inputs, outputs)
	}
	in, err := queues.InputQueue("image")
	if err != nil {
		t.Fatal(err)
	}
	out, err := queues.OutputQueue("probs")
	if err != nil {
		t.Fatal(err)
	}
	info, err := in.Info()
	if err != nil || info.SizeInBytes != imageSize*4 || !info.Connected || info.DataType != mrt.F32 {
		t.Fatalf("input queue %+v, %v", info, err)
	}
	result := make([]byte, classes*4)
	written := make(chan struct{})
	if err := in.Enqueue(testContext(t), mrt.NewTensor(image(2)).Data, nil); err != nil {
		t.Fatal(err)
	}
	if err := out.Enqueue(testContext(t), result, func() { close(written) }); err != nil {
		t.Fatal(err)
	}
	if err := session.RunMainPrograms(testContext(t)); err != nil {
		t.Fatal(err)
	}
	<-written
	got, _ := mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: result})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("queues %v, runner %v", got, want)
	}
	_, err = queues.InputQueue("imagez")
	wantError(t, err, mrt.NotFound, "imagez")
	wantError(t, in.Enqueue(testContext(t), make([]byte, 3), nil), mrt.InvalidArgument, "3")
}

func TestAQueueWithoutSessionAndAContextEndingABlockedEnqueue(t *testing.T) {
	model := loadModel(t)
	queues, err := mrt.NewQueueManager(model, &mrt.QueueOptions{RingSizeMultiplier: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer queues.Close()
	in, err := queues.InputQueue("image")
	if err != nil {
		t.Fatal(err)
	}
	data := mrt.NewTensor(image(3)).Data
	read := make(chan struct{})
	if err := in.Enqueue(testContext(t), data, func() { close(read) }); err != nil {
		t.Fatal(err)
	}
	// The ring is full: the next enqueue blocks until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = in.Enqueue(ctx, data, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, mrt.Cancelled) {
		t.Fatalf("a blocked enqueue whose context ended gave %v", err)
	}
	if info, _ := in.Info(); info.Connected {
		t.Fatal("the context did not disconnect the queue")
	}
	if err := in.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := in.Enqueue(testContext(t), data, func() { close(read) }); err != nil {
		t.Fatal(err)
	}
	// This goroutine plays the device.
	image, _ := model.AnchorByName("image")
	device := make([]byte, len(data))
	if err := queues.Transfer(image.Handle, device); err != nil {
		t.Fatal(err)
	}
	<-read
	if string(device) != string(data) {
		t.Fatal("the transfer did not carry the enqueued bytes")
	}
}

func TestDevicesOfTheSystem(t *testing.T) {
	manager, err := mrt.NewDeviceManager()
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	devices, err := manager.Devices()
	if err != nil || len(devices) == 0 || devices[0].NumIPUs != 1 {
		t.Fatalf("devices %+v, %v", devices, err)
	}
	device, err := manager.GetDevice(testContext(t), mrt.DeviceRequest{ID: 0, HasID: true})
	if err != nil {
		t.Fatal(err)
	}
	defer device.Close()
	if id, err := device.ID(); err != nil || id != 0 {
		t.Fatalf("id %d, %v", id, err)
	}
	// Device 0 is ours now: asking again waits until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = manager.GetDevice(ctx, mrt.DeviceRequest{ID: 0, HasID: true})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, mrt.DeadlineExceeded) {
		t.Fatalf("a busy device gave %v", err)
	}
	_, err = manager.GetDevice(testContext(t), mrt.DeviceRequest{NumIPUs: 3})
	wantError(t, err, mrt.InvalidArgument, "3")
	_, err = manager.TryGetDevice(mrt.DeviceRequest{ID: 9999, HasID: true})
	wantError(t, err, mrt.NotFound, "9999")
	ipuModel, err := manager.IPUModelDevice(2, 21, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ipuModel.Close()
	if id, _ := ipuModel.ID(); id != -1 {
		t.Fatalf("an IPU Model device has id %d", id)
	}
	if n, _ := ipuModel.NumIPUs(); n != 2 {
		t.Fatalf("an IPU Model device of %d IPUs", n)
	}
}

// image and probs are both Main anchors: an override gives probs its own ring.
func TestRingSizeOverridesSizeSingleRings(t *testing.T) {
	model := loadModel(t)
	queues, err := mrt.NewQueueManager(model, &mrt.QueueOptions{RingSizeMultiplier: 2,
		RingSizeOverrides: map[string]int64{"probs": 5}})
	if err != nil {
		t.Fatal(err)
	}
	defer queues.Close()
	in, err := queues.InputQueue("image")
	if err != nil {
		t.Fatal(err)
	}
	out, err := queues.OutputQueue("probs")
	if err != nil {
		t.Fatal(err)
	}
	inInfo, err1 := in.Info()
	outInfo, err2 := out.Info()
	if err1 != nil || err2 != nil || inInfo.NumBuffers != 2 || outInfo.NumBuffers != 5 {
		t.Fatalf("image %+v (%v), probs %+v (%v): want 2 and 5 buffers", inInfo, err1, outInfo, err2)
	}
	_, err = mrt.NewQueueManager(model, &mrt.QueueOptions{RingSizeOverrides: map[string]int64{"nope": 2}})
	wantError(t, err, mrt.NotFound, "the model has no anchor named 'nope'")
	_, err = mrt.NewQueueManager(model, &mrt.QueueOptions{RingSizeOverrides: map[string]int64{"probs": 0}})
	wantError(t, err, mrt.InvalidArgument, "('probs'): the multiplier must be at least 1, got 0")
}
