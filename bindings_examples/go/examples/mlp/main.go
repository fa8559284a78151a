// Command mlp runs libmrt's mlp example model through the Go binding (package
// mrt), sync and async, and checks the results against the same network
// computed here from the model's own TensorData. With -check-errors it shows
// instead how misuse comes back as Go errors carrying the status code and the
// library's message. The model path defaults to $MRT_TEST_MODEL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

const (
	imageSize = 784
	hidden    = 128
	classes   = 10
	// Relative tolerance between the device's float32 math and the float64 reference.
	relativeTolerance = 1e-5
)

func main() {
	checkErrors := flag.Bool("check-errors", false, "show how misuse is reported instead of running the model")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mlp [-check-errors] [MODEL.popef]   (default: $MRT_TEST_MODEL)")
	}
	flag.Parse()
	modelPath := os.Getenv("MRT_TEST_MODEL")
	if flag.NArg() > 0 {
		modelPath = flag.Arg(0)
	}
	if modelPath == "" {
		fmt.Fprintln(os.Stderr, "mlp: no model: pass MODEL.popef or set MRT_TEST_MODEL")
		os.Exit(2)
	}
	var code int
	var err error
	if *checkErrors {
		code, err = showErrors(modelPath)
	} else {
		code, err = run(modelPath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(modelPath string) (int, error) {
	if err := mrt.CheckVersion(0, 1); err != nil {
		return 1, err
	}
	// libmrt's log lines arrive through a Go function, on any library thread.
	if err := mrt.SetLogCallback(func(level mrt.LogLevel, message string) {
		fmt.Fprintf(os.Stderr, "[libmrt %d] %s\n", level, message)
	}); err != nil {
		return 1, err
	}
	model, err := mrt.LoadModel(modelPath)
	if err != nil {
		return 1, err
	}
	defer model.Close()
	runner, err := mrt.NewModelRunner(model, nil)
	if err != nil {
		return 1, err
	}
	defer runner.Close()

	image := deterministicImage()
	reference, err := referenceProbs(model, image)
	if err != nil {
		return 1, err
	}

	syncProbs := make([]float32, classes)
	if err := execute(runner, map[string][]float32{"image": image}, map[string][]float32{"probs": syncProbs}); err != nil {
		return 1, err
	}

	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image)})
	if err != nil {
		return 1, err
	}
	defer future.Close()
	ready := make(chan mrt.Code, 1)
	if err := future.OnReady(func(status mrt.Code) { ready <- status }); err != nil {
		return 1, err
	}
	outputs, err := future.Wait(context.Background())
	if err != nil {
		return 1, err
	}
	select {
	case status := <-ready:
		if status != mrt.OK {
			return 1, fmt.Errorf("OnReady reported %v for a request that succeeded", status)
		}
	case <-time.After(10 * time.Second):
		return 1, errors.New("OnReady was not called")
	}
	asyncProbs, err := mrt.Values[float32](outputs["probs"])
	if err != nil {
		return 1, err
	}

	bad := mismatches("sync", syncProbs, reference) + mismatches("async", asyncProbs, reference)
	best := argmax(reference)
	if bad > 0 || argmax(syncProbs) != best || argmax(asyncProbs) != best {
		fmt.Printf("mlp: MISMATCH: reference argmax %d p=%.4f, sync %v, async %v\n", best, reference[best], syncProbs, asyncProbs)
		return 1, nil
	}
	fmt.Printf("mlp: argmax %d p=%.4f (sync and async match the reference, libmrt %s)\n", best, reference[best], mrt.Version())
	return 0, nil
}

// deterministicImage is the same image on every run: a pattern in [0, 1).
func deterministicImage() []float32 {
	image := make([]float32, imageSize)
	for i := range image {
		image[i] = float32(i*37%101) / 101
	}
	return image
}

// referenceProbs is softmax(relu(image.w1 + b1).w2 + b2) in float64, from the model's weights.
func referenceProbs(model *mrt.Model, image []float32) ([]float64, error) {
	weights := map[string][]float32{}
	for _, name := range []string{"w1", "b1", "w2", "b2"} {
		values, err := tensorData(model, name)
		if err != nil {
			return nil, err
		}
		weights[name] = values
	}
	w1, b1, w2, b2 := weights["w1"], weights["b1"], weights["w2"], weights["b2"]
	if len(w1) != imageSize*hidden || len(b1) != hidden || len(w2) != hidden*classes || len(b2) != classes {
		return nil, errors.New("the model's weights do not have the mlp's shapes")
	}
	h := make([]float64, hidden)
	for j := range h {
		sum := float64(b1[j])
		for i := 0; i < imageSize; i++ {
			sum += float64(image[i]) * float64(w1[i*hidden+j])
		}
		h[j] = math.Max(sum, 0)
	}
	logits := make([]float64, classes)
	maxLogit := math.Inf(-1)
	for c := range logits {
		sum := float64(b2[c])
		for j := 0; j < hidden; j++ {
			sum += h[j] * float64(w2[j*classes+c])
		}
		logits[c] = sum
		maxLogit = math.Max(maxLogit, sum)
	}
	total := 0.0
	probs := make([]float64, classes)
	for c, l := range logits {
		probs[c] = math.Exp(l - maxLogit)
		total += probs[c]
	}
	for c := range probs {
		probs[c] /= total
	}
	return probs, nil
}

func mismatches(what string, probs []float32, reference []float64) int {
	if len(probs) != len(reference) {
		fmt.Printf("mlp: %s: %d probabilities, expected %d\n", what, len(probs), len(reference))
		return 1
	}
	count := 0
	for c, p := range probs {
		// Relative, with a floor for probabilities near zero.
		if math.Abs(float64(p)-reference[c]) > relativeTolerance*math.Max(math.Abs(reference[c]), 1e-3) {
			fmt.Printf("mlp: %s: class %d: %v vs reference %v\n", what, c, p, reference[c])
			count++
		}
	}
	return count
}

func argmax[T float32 | float64](values []T) int {
	best := 0
	for i, v := range values {
		if v > values[best] {
			best = i
		}
	}
	return best
}

// showErrors runs each misuse and checks it comes back as the expected *mrt.Error.
func showErrors(modelPath string) (int, error) {
	model, err := mrt.LoadModel(modelPath)
	if err != nil {
		return 1, err
	}
	runner, err := mrt.NewModelRunner(model, nil)
	if err != nil {
		return 1, err
	}
	image := deterministicImage()
	probs := make([]float32, classes)
	failures := 0
	expect := func(what string, err error, code mrt.Code, needle string) {
		var mrtErr *mrt.Error
		switch {
		case errors.As(err, &mrtErr) && mrtErr.Code == code && strings.Contains(mrtErr.Message, needle):
			fmt.Printf("%s:\n  -> %v\n", what, err)
		case err == nil:
			fmt.Printf("%s: UNEXPECTED success (wanted %v)\n", what, code)
			failures++
		default:
			fmt.Printf("%s: UNEXPECTED error %v (wanted %v mentioning %q)\n", what, err, code, needle)
			failures++
		}
	}
	out := map[string][]float32{"probs": probs}

	expect("wrong tensor name ('imagez' instead of 'image')",
		execute(runner, map[string][]float32{"imagez": image}, out), mrt.NotFound, "unknown input 'imagez'")
	expect("an extra tensor the model does not have",
		execute(runner, map[string][]float32{"image": image, "label": image}, out), mrt.NotFound, "'label'")
	expect("wrong buffer size (783 floats for image [1,784])",
		execute(runner, map[string][]float32{"image": image[:imageSize-1]}, out), mrt.InvalidArgument, "3132 bytes")
	_, err = tensorData(model, "w3")
	expect("unknown TensorData", err, mrt.NotFound, "w3")
	_, err = mrt.LoadModel("/nonexistent/mlp.popef")
	expect("a model file that does not exist", err, mrt.NotFound, "/nonexistent/mlp.popef")

	// A panic in a callback is recovered before it reaches C.
	before := mrt.CaughtCallbackPanics()
	future, err := runner.ExecuteAsync(map[string]mrt.Tensor{"image": mrt.NewTensor(image)})
	if err != nil {
		return 1, err
	}
	if err := future.OnReady(func(mrt.Code) { panic("a deliberately panicking OnReady callback") }); err != nil {
		return 1, err
	}
	_, waitErr := future.Wait(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for mrt.CaughtCallbackPanics() == before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	caught := mrt.CaughtCallbackPanics() - before
	fmt.Printf("panicking OnReady callback: recovered %d panic(s); the request itself: %v\n", caught, errOrOK(waitErr))
	if caught != 1 || waitErr != nil {
		failures++
	}
	future.Close()

	// Use after Close: an error, not a crash. Closing twice is harmless.
	runner.Close()
	runner.Close()
	expect("Execute after Close", execute(runner, map[string][]float32{"image": image}, out), mrt.FailedPrecondition, "after Close")
	model.Close()
	_, err = tensorData(model, "w1")
	expect("TensorData after Close", err, mrt.FailedPrecondition, "after Close")
	_, err = future.Wait(context.Background())
	expect("Future.Wait after Close", err, mrt.FailedPrecondition, "after Close")

	if failures > 0 {
		fmt.Printf("check-errors: %d check(s) FAILED\n", failures)
		return 1, nil
	}
	fmt.Println("check-errors: every misuse gave the expected error")
	return 0, nil
}

func errOrOK(err error) string {
	if err == nil {
		return "succeeded"
	}
	return err.Error()
}

// execute runs one request of float32 tensors and copies the outputs into out.
func execute(runner *mrt.ModelRunner, inputs, out map[string][]float32) error {
	tensors := make(map[string]mrt.Tensor, len(inputs))
	for name, values := range inputs {
		tensors[name] = mrt.NewTensor(values)
	}
	outputs, err := runner.Execute(context.Background(), tensors)
	if err != nil {
		return err
	}
	for name, dst := range out {
		values, err := mrt.Values[float32](outputs[name])
		if err != nil {
			return err
		}
		copy(dst, values)
	}
	return nil
}

// tensorData is TensorData blob name as float32 values.
func tensorData(model *mrt.Model, name string) ([]float32, error) {
	data, err := model.TensorData(name)
	if err != nil {
		return nil, err
	}
	return mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: data})
}
