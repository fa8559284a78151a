package mrt_test

import (
	"fmt"
	"path/filepath"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

// reluSaveModel is y = relu(x) for 4 floats (Main, program 0) whose Save
// program (1) hands the last y back as "last_y".
func reluSaveModel(t *testing.T) *mrt.Model {
	t.Helper()
	graph, main, y, must := reluSequence(t)
	defer graph.Close()
	copyOut := func(stream string) mrt.ProgramID {
		fifo, err := graph.AddDeviceToHostFIFO(stream, mrt.F32, 4)
		must(err)
		program, err := graph.CopyToStream(y, fifo, "")
		must(err)
		return program
	}
	must(graph.SequenceAdd(main, copyOut("y")))
	save, err := graph.Sequence("save", copyOut("last_y"))
	must(err)
	exe, err := graph.Compile([]mrt.ProgramID{main, save}, nil, nil)
	must(err)
	defer exe.Close()
	builder, err := mrt.NewModelBuilder("relu_save", exe)
	must(err)
	defer builder.Close()
	must(builder.SetProgramFlow(mrt.PhaseMain, 0))
	must(builder.SetProgramFlow(mrt.PhaseSave, 1))
	must(builder.AddAnchor(mrt.AnchorConfig{Handle: "x", Shape: []int64{1, 4}, Programs: []uint64{0}}))
	must(builder.AddAnchor(mrt.AnchorConfig{Handle: "y", Shape: []int64{1, 4}, Programs: []uint64{0}}))
	must(builder.AddAnchor(mrt.AnchorConfig{Handle: "last_y", Shape: []int64{4}, Programs: []uint64{1}}))
	model, err := builder.Build()
	must(err)
	t.Cleanup(func() { model.Close() })
	return model
}

// The Save programs write into the caller's tensors when the runner closes,
// whether it was made from a Model or from files.
func TestSaveOutputsAreWrittenAtClose(t *testing.T) {
	model := reluSaveModel(t)
	path := filepath.Join(t.TempDir(), "relu_save.popef")
	if err := model.Write(path); err != nil {
		t.Fatal(err)
	}
	fromModel := func(options *mrt.RunnerOptions) (*mrt.ModelRunner, error) { return mrt.NewModelRunner(model, options) }
	fromFiles := func(options *mrt.RunnerOptions) (*mrt.ModelRunner, error) {
		return mrt.NewModelRunnerFromFiles([]string{path}, options)
	}
	for name, create := range map[string]func(*mrt.RunnerOptions) (*mrt.ModelRunner, error){"model": fromModel, "files": fromFiles} {
		lastY := make([]float32, 4)
		runner, err := create(&mrt.RunnerOptions{RunSavePrograms: true,
			SaveOutputs: map[uint32]map[string]mrt.Tensor{0: {"last_y": mrt.NewTensor(lastY, 4)}}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := runner.Execute(testContext(t), map[string]mrt.Tensor{"x": mrt.NewTensor([]float32{-1, 2, -3, 4}, 1, 4)}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fmt.Sprint(lastY) != "[0 0 0 0]" {
			t.Fatalf("%s: written before Close: %v", name, lastY)
		}
		runner.Close()
		if fmt.Sprint(lastY) != "[0 2 0 4]" {
			t.Fatalf("%s: the Save program wrote %v", name, lastY)
		}
		// Each tensor is checked against its anchor before anything is created.
		for _, bad := range []struct {
			tensor mrt.Tensor
			code   mrt.Code
			needle string
		}{
			{mrt.NewTensor([]int32{0, 0, 0, 0}, 4), mrt.InvalidArgument, `save output "last_y" of replica 0: the tensor holds S32, the model's anchor F32`},
			{mrt.NewTensor([]float32{0, 0}, 2), mrt.InvalidArgument, `save output "last_y" of replica 0: 8 bytes, the model's anchor has 16`},
			{mrt.NewTensor([]float32{0, 0, 0, 0}, 2, 2), mrt.InvalidArgument, `save output "last_y" of replica 0: shape [2 2], the model's anchor has [4]`},
		} {
			_, err := create(&mrt.RunnerOptions{RunSavePrograms: true,
				SaveOutputs: map[uint32]map[string]mrt.Tensor{0: {"last_y": bad.tensor}}})
			wantError(t, err, bad.code, bad.needle)
		}
		_, err = create(&mrt.RunnerOptions{SaveOutputs: map[uint32]map[string]mrt.Tensor{0: {"nope": mrt.NewTensor(lastY)}}})
		wantError(t, err, mrt.NotFound, "nope")
	}
}

func TestSessionsAndRunnersComeFromFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "relu_save.popef")
	if err := reluSaveModel(t).Write(path); err != nil {
		t.Fatal(err)
	}
	session, err := mrt.NewSessionFromFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	model, err := session.Model()
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if info, err := model.Info(); err != nil || info.Executable != "relu_save" {
		t.Fatalf("the session's model: %+v, %v", info, err)
	}
	missing := filepath.Join(t.TempDir(), "missing.popef")
	_, err = mrt.NewSessionFromFiles([]string{missing}, nil)
	wantError(t, err, mrt.NotFound, missing)
	_, err = mrt.NewModelRunnerFromFiles([]string{missing}, nil)
	wantError(t, err, mrt.NotFound, missing)
	runner, err := mrt.NewModelRunnerFromFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	outputs, err := runner.Execute(testContext(t), map[string]mrt.Tensor{"x": mrt.NewTensor([]float32{1, -2, 3, -4}, 1, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if y, _ := mrt.Values[float32](outputs["y"]); fmt.Sprint(y) != "[1 0 3 0]" {
		t.Fatalf("relu gave %v", y)
	}
}
