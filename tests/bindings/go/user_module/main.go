// Command serve is a user's program of the Go binding, as its README shows
// it: it requires github.com/libmrt/mrt-go in go.mod (tests/bindings/go
// resolves it offline with a go.work) and serves the mlp model once.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	mrt "github.com/libmrt/mrt-go"
)

func main() {
	model, err := mrt.LoadModel(os.Args[1])
	check(err)
	defer model.Close()
	runner, err := mrt.NewModelRunner(model, &mrt.RunnerOptions{DeviceWait: mrt.For(time.Minute)})
	check(err)
	defer runner.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	image := make([]float32, 784)
	outputs, err := runner.Execute(ctx, map[string]mrt.Tensor{"image": mrt.NewTensor(image, 1, 784)})
	check(err)
	probs, err := mrt.Values[float32](outputs["probs"])
	check(err)
	best := 0
	for i, p := range probs {
		if p > probs[best] {
			best = i
		}
	}
	fmt.Printf("probs: %d float32, argmax %d\n", len(probs), best)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
