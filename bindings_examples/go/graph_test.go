package mrt_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

// reluSequence starts a graph for gc200 whose sequence "main" reads 4 floats
// x from the host FIFO "x" and computes y = relu(x); the caller closes the
// graph (an executable compiled from it does not need it).
func reluSequence(t *testing.T) (graph *mrt.Graph, main mrt.ProgramID, y mrt.TensorID, must func(error)) {
	t.Helper()
	must = func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	target, err := mrt.NewTarget("gc200", 1)
	must(err)
	graph, err = mrt.NewGraph(target, 1)
	must(err)
	main, err = graph.Sequence("main")
	must(err)
	x, err := graph.CreateTensor(mrt.F32, []uint64{4}, "x", mrt.Tiles{})
	must(err)
	xs, err := graph.AddHostToDeviceFIFO("x", mrt.F32, 4)
	must(err)
	copyIn, err := graph.CopyFromStream(xs, x, "")
	must(err)
	must(graph.SequenceAdd(main, copyIn))
	y, err = graph.Unary(main, "Relu", x, -1, "relu")
	must(err)
	return graph, main, y, must
}

// reluGraph is y = relu(x) for 4 floats through host FIFOs "x" and "y":
// program 0 of the graph it returns, compiled.
func reluGraph(t *testing.T) *mrt.Executable {
	t.Helper()
	graph, main, y, must := reluSequence(t)
	defer graph.Close() // the executable does not need it
	ys, err := graph.AddDeviceToHostFIFO("y", mrt.F32, 4)
	must(err)
	copyOut, err := graph.CopyToStream(y, ys, "")
	must(err)
	must(graph.SequenceAdd(main, copyOut))
	info, err := graph.TensorInfo(y)
	if err != nil || info.DataType != mrt.F32 || fmt.Sprint(info.Shape) != "[4]" || info.NumBytes != 16 {
		t.Fatalf("relu's output %+v, %v", info, err)
	}
	_, err = graph.AddVertex(0, "NoSuchCodelet", 0)
	wantError(t, err, mrt.InvalidArgument, "")
	cs, err := graph.AddComputeSet("cs")
	must(err)
	_, err = graph.AddVertex(cs, "NoSuchCodelet", 0)
	wantError(t, err, mrt.NotFound, "NoSuchCodelet")
	steps := 0
	exe, err := graph.Compile([]mrt.ProgramID{main}, nil, func(step, total int) { steps++ })
	must(err)
	t.Cleanup(func() { exe.Close() })
	if steps == 0 {
		t.Fatal("Compile reported no progress")
	}
	_, err = graph.Compile([]mrt.ProgramID{main}, nil, nil)
	wantError(t, err, mrt.FailedPrecondition, "")
	return exe
}

func TestABuiltGraphIsServedAsAModel(t *testing.T) {
	exe := reluGraph(t)
	info, err := exe.Info()
	if err != nil || info.NumPrograms != 1 || info.NumStreams != 2 || info.TotalMemoryBytes == 0 {
		t.Fatalf("executable %+v, %v", info, err)
	}
	if h, err := exe.Handle(mrt.HandleHostToDevice, 0); err != nil || h.Handle != "x" || h.Kind != mrt.HandleHostToDevice || h.NumElements != 4 {
		t.Fatalf("stream 0: %+v, %v", h, err)
	}
	_, err = exe.Handle(mrt.HandleRemoteBuffer, 0)
	wantError(t, err, mrt.InvalidArgument, "")
	if target, err := exe.Target(); err != nil || target.Name() != "GC200" || target.NumIPUs() != 1 {
		t.Fatalf("target %v, %v", target, err)
	}
	builder, err := mrt.NewModelBuilder("relu", exe)
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close()
	if err := builder.SetProgramFlow(mrt.PhaseMain, 0); err != nil {
		t.Fatal(err)
	}
	for _, handle := range []string{"x", "y"} {
		if err := builder.AddAnchor(mrt.AnchorConfig{Handle: handle, Shape: []int64{1, 4}, Programs: []uint64{0}}); err != nil {
			t.Fatal(err)
		}
	}
	wantError(t, builder.AddAnchor(mrt.AnchorConfig{Handle: "z", Shape: []int64{1, 4}}), mrt.InvalidArgument, "z")
	weights := mrt.NewTensor([]float32{1.5, -2}, 2)
	if err := builder.AddTensorData("weights", weights); err != nil {
		t.Fatal(err)
	}
	if err := builder.AddFeedData("feed", mrt.NewTensor([]int32{1, 2, 3, 4}, 2), 2); err != nil {
		t.Fatal(err)
	}
	wantError(t, builder.AddFeedData("bad_feed", mrt.NewTensor([]int32{1, 2, 3}, 2), 2), mrt.InvalidArgument, "bad_feed")
	model, err := builder.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if data, err := model.TensorData("weights"); err != nil || string(data) != string(weights.Data) {
		t.Fatalf("TensorData weights: %v, %v", data, err)
	}
	if data, count, err := model.FeedData("feed"); err != nil || count != 2 || len(data) != 16 {
		t.Fatalf("FeedData feed: %d bytes, %d tensors, %v", len(data), count, err)
	}
	runner := newRunner(t, model)
	outputs, err := runner.Execute(testContext(t), map[string]mrt.Tensor{"x": mrt.NewTensor([]float32{-1, 2, -3, 4})})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := mrt.Values[float32](outputs["y"])
	if fmt.Sprint(y) != "[0 2 0 4]" {
		t.Fatalf("relu gave %v", y)
	}
}

func TestAnEngineRunsAnExecutableOnADevice(t *testing.T) {
	exe := reluGraph(t)
	engine, err := mrt.NewEngine(exe, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	manager, err := mrt.NewDeviceManager()
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	device, err := manager.IPUModelDevice(1, 2, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer device.Close()
	input := mrt.NewTensor([]float32{5, -6, 7, -8})
	var got []float32
	if err := engine.ConnectStream("x", mrt.AllReplicas, func(data []byte, replica uint32) { copy(data, input.Data) }); err != nil {
		t.Fatal(err)
	}
	err = engine.ConnectStream("y", mrt.AllReplicas, func(data []byte, replica uint32) {
		got, _ = mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: append([]byte(nil), data...)})
	})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, engine.ConnectStream("z", 0, func([]byte, uint32) {}), mrt.NotFound, "z")
	if err := engine.Load(device); err != nil {
		t.Fatal(err)
	}
	if err := engine.Run(testContext(t), 0, mrt.AllReplicas); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[5 0 7 0]" {
		t.Fatalf("relu gave %v", got)
	}
	if err := engine.SetProfiling(true); err != nil {
		t.Fatal(err)
	}
	if err := engine.Run(testContext(t), 0, mrt.AllReplicas); err != nil {
		t.Fatal(err)
	}
	if profile, err := engine.Profile(mrt.ProfileIntervals); err != nil || !strings.HasPrefix(profile, "begin,end") {
		t.Fatalf("profile %.80q, %v", profile, err)
	}
	if cycles, err := engine.DeviceCycles(0); err != nil || cycles == 0 {
		t.Fatalf("cycles %d, %v", cycles, err)
	}
	wantError(t, engine.Run(testContext(t), 5, mrt.AllReplicas), mrt.InvalidArgument, "5")

	// The same through circular host buffers instead of callbacks.
	x, err := engine.ConnectStreamToBuffer("x", mrt.AllReplicas, 16)
	if err != nil {
		t.Fatal(err)
	}
	y, err := engine.ConnectStreamToBuffer("y", mrt.AllReplicas, 16)
	if err != nil {
		t.Fatal(err)
	}
	copy(x, mrt.NewTensor([]float32{-9, 10, -11, 12}).Data)
	if err := engine.Run(testContext(t), 0, mrt.AllReplicas); err != nil {
		t.Fatal(err)
	}
	if values, _ := mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: y}); fmt.Sprint(values) != "[0 10 0 12]" {
		t.Fatalf("relu through buffers gave %v", values)
	}
	_, err = engine.ConnectStreamToBuffer("x", mrt.AllReplicas, 15)
	wantError(t, err, mrt.InvalidArgument, "15")
}

// reluONNX is an ONNX model y = Relu(x), x and y FLOAT [1, 4], opset 13, as
// python3-onnx's helper.make_model serializes it.
const reluONNX = "080812003a440a120a01781201791a0472656c75220452656c75120472656c755a130a0178120e0a0c080112080a0208010a02080462130a0179120e0a0c080112080a0208010a02080442040a00100d"

func TestAnONNXModelCompilesAndServes(t *testing.T) {
	data, _ := hex.DecodeString(reluONNX)
	steps := 0
	model, err := mrt.CompileONNX(data, &mrt.ONNXOptions{ModelName: "relu_onnx", BatchSize: 1,
		InputShapes: map[string][]int64{"x": {2, 4}}, Progress: func(int, int) { steps++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if info, _ := model.Info(); info.Executable != "relu_onnx" || steps == 0 {
		t.Fatalf("model %+v after %d progress steps", info, steps)
	}
	runner := newRunner(t, model)
	outputs, err := runner.Execute(testContext(t), map[string]mrt.Tensor{"x": mrt.NewTensor([]float32{-1, 1, -2, 2, 3, -3, 4, -4})})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := mrt.Values[float32](outputs["y"])
	if fmt.Sprint(y) != "[0 1 0 2 3 0 4 0]" || fmt.Sprint(outputs["y"].Shape) != "[2 4]" {
		t.Fatalf("relu gave %v shape %v", y, outputs["y"].Shape)
	}
	if dim, err := model.BatchingDim(); err != nil || dim != nil {
		t.Fatalf("BatchingDim of a model recording none: %v, %v", dim, err)
	}
	_, err = mrt.CompileONNX([]byte("not an onnx model"), nil)
	wantError(t, err, mrt.CorruptModel, "")
	_, err = mrt.CompileONNXFile("/nonexistent/model.onnx", nil)
	wantError(t, err, mrt.NotFound, "/nonexistent/model.onnx")
	_, err = mrt.CompileONNX(data, &mrt.ONNXOptions{Target: "gc9000"})
	wantError(t, err, mrt.NotFound, "gc9000")
}

func TestACompiledModelRecordsItsBatchingDim(t *testing.T) {
	data, _ := hex.DecodeString(reluONNX)
	zero := uint32(0)
	model, err := mrt.CompileONNX(data, &mrt.ONNXOptions{BatchingDim: &zero})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if dim, err := model.BatchingDim(); err != nil || dim == nil || *dim != 0 {
		t.Fatalf("BatchingDim: %v, %v", dim, err)
	}
	two := uint32(2)
	_, err = mrt.CompileONNX(data, &mrt.ONNXOptions{BatchingDim: &two})
	wantError(t, err, mrt.InvalidArgument, "batching_dim 2")
	model.Close()
	_, err = model.BatchingDim()
	if !errors.Is(err, mrt.ErrClosed) {
		t.Fatalf("BatchingDim of a closed model: %v", err)
	}
}

func TestTheCodeletLibraryIsListed(t *testing.T) {
	codelets, err := mrt.Codelets()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codelets {
		if c.Name == "Relu" {
			if len(c.Fields) < 2 || c.Description == "" {
				t.Fatalf("Relu: %+v", c)
			}
			return
		}
	}
	t.Fatalf("no Relu among %d codelets", len(codelets))
}
