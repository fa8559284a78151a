package mrt_test

// In-model replication: the replicated model (add_one compiled with
// replication factor 2, MRT_TEST_REPLICATED_MODEL) served per replica by a
// Session - a queue manager and a goroutine running Main for each replica,
// callbacks bound per replica, handler factories told the replica - and by
// a ModelRunner; and the errors naming a bad replica.

import (
	"fmt"
	"sync"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

const (
	replicas = 2
	addOneN  = 16
)

func loadReplicatedModel(t *testing.T) *mrt.Model {
	t.Helper()
	return loadModelNamedBy(t, "MRT_TEST_REPLICATED_MODEL", "replicated")
}

// replicaInput is distinct for every (replica, request).
func replicaInput(replica uint32, request int) []float32 {
	values := make([]float32, addOneN)
	for i := range values {
		values[i] = float32(1000*int(replica) + 20*request + i)
	}
	return values
}

func plusOne(values []float32) []float32 {
	out := make([]float32, len(values))
	for i, v := range values {
		out[i] = v + 1
	}
	return out
}

func floatsOf(bytes []byte) []float32 {
	values, _ := mrt.Values[float32](mrt.Tensor{Type: mrt.F32, Data: bytes})
	return values
}

// feed writes values into an input's transfer.
func feed(values []float32) mrt.AnchorCallback {
	data := mrt.NewTensor(values).Data
	return func(buffer []byte) { copy(buffer, data) }
}

func TestAQueueManagerAndAGoroutinePerReplica(t *testing.T) {
	const requests = 20
	model := loadReplicatedModel(t)
	session := newBoundSession(t, model)
	if n, err := session.NumReplicas(); err != nil || n != replicas {
		t.Fatalf("NumReplicas %d, %v", n, err)
	}
	var outputs [replicas][requests][]byte
	var inputs [replicas]*mrt.InputQueue
	var outs [replicas]*mrt.OutputQueue
	for r := uint32(0); r < replicas; r++ {
		manager, err := session.CreateQueueManagerForReplica(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer manager.Close()
		if inputs[r], err = manager.InputQueue("x"); err != nil {
			t.Fatal(err)
		}
		if outs[r], err = manager.OutputQueue("y"); err != nil {
			t.Fatal(err)
		}
	}
	var devices sync.WaitGroup
	runErrors := make(chan error, replicas)
	for r := uint32(0); r < replicas; r++ {
		devices.Add(1)
		go func(replica uint32) {
			defer devices.Done()
			for i := 0; i < requests; i++ {
				if err := session.RunMainProgramsForReplica(testContext(t), replica); err != nil {
					runErrors <- err
					return
				}
			}
		}(r)
	}
	// This goroutine is every queue's one producer; each replica's goroutine drains its own.
	var written sync.WaitGroup
	for i := 0; i < requests; i++ {
		for r := uint32(0); r < replicas; r++ {
			if err := inputs[r].Enqueue(testContext(t), mrt.NewTensor(replicaInput(r, i)).Data, nil); err != nil {
				t.Fatal(err)
			}
			outputs[r][i] = make([]byte, addOneN*4)
			written.Add(1)
			if err := outs[r].Enqueue(testContext(t), outputs[r][i], written.Done); err != nil {
				t.Fatal(err)
			}
		}
	}
	devices.Wait()
	written.Wait()
	close(runErrors)
	for err := range runErrors {
		t.Fatal(err)
	}
	for r := uint32(0); r < replicas; r++ {
		for i := 0; i < requests; i++ {
			if got, want := floatsOf(outputs[r][i]), plusOne(replicaInput(r, i)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("replica %d request %d: %v, want %v", r, i, got, want)
			}
		}
	}
}

func TestCallbacksAndFactoriesPerReplica(t *testing.T) {
	model := loadReplicatedModel(t)
	session := newBoundSession(t, model)
	var mu sync.Mutex // the replicas' threads write their own entry at once
	results := make([][]float32, replicas)
	result := func(r uint32) string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(results[r])
	}
	for r := uint32(0); r < replicas; r++ {
		replica := r
		if err := session.SetReplicaCallbackForAnchor("x", r, feed(replicaInput(r, 0))); err != nil {
			t.Fatal(err)
		}
		drain := func(buffer []byte) {
			mu.Lock()
			defer mu.Unlock()
			results[replica] = floatsOf(buffer)
		}
		if err := session.SetReplicaCallbackForAnchor("y", r, drain); err != nil {
			t.Fatal(err)
		}
	}
	if err := session.RunMainPrograms(testContext(t)); err != nil { // every replica, each on its own thread
		t.Fatal(err)
	}
	for r := uint32(0); r < replicas; r++ {
		if result(r) != fmt.Sprint(plusOne(replicaInput(r, 0))) {
			t.Fatalf("replica %d: %v", r, result(r))
		}
	}

	var asked []string
	err := session.SetUserInputHandler(func(anchor mrt.AnchorInfo) mrt.AnchorCallback {
		asked = append(asked, fmt.Sprintf("%s/%d", anchor.Handle, anchor.Replica))
		return feed(replicaInput(anchor.Replica, 5))
	}, nil, false)
	if err != nil || fmt.Sprint(asked) != "[x/0 x/1]" {
		t.Fatalf("factory asked for %v, %v", asked, err)
	}
	for r := uint32(0); r < replicas; r++ {
		if err := session.RunMainProgramsForReplica(testContext(t), r); err != nil {
			t.Fatal(err)
		}
		if result(r) != fmt.Sprint(plusOne(replicaInput(r, 5))) {
			t.Fatalf("replica %d: %v", r, result(r))
		}
	}
}

func TestABadReplicaIsNamed(t *testing.T) {
	model := loadReplicatedModel(t)
	session := newBoundSession(t, model)
	wantError(t, session.RunMainProgramsForReplica(testContext(t), 2), mrt.InvalidArgument, "replica 2 out of range")
	wantError(t, session.SetReplicaCallbackForAnchor("x", 2, feed(make([]float32, addOneN))), mrt.InvalidArgument,
		"replica 2")
	_, err := session.CreateQueueManagerForReplica(2, nil)
	wantError(t, err, mrt.InvalidArgument, "replica 2 out of range: the session's model 'replicated' has 2 replicas")
	_, err = session.CreateQueueManager(nil)
	wantError(t, err, mrt.InvalidArgument, "each with its own queues")
	if err := session.Stop(); err != nil {
		t.Fatal(err)
	}
	wantError(t, session.RunMainProgramsForReplica(testContext(t), 0), mrt.FailedPrecondition, "")
	if err := session.Reload(); err != nil {
		t.Fatal(err)
	}
	manager, err := session.CreateQueueManagerForReplica(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	manager.Close() // replica 1's runs now get zeros instead of waiting
	if err := session.RunMainProgramsForReplica(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
	unbound, err := mrt.NewSession(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unbound.Close()
	wantError(t, unbound.RunMainProgramsForReplica(testContext(t), 0), mrt.FailedPrecondition, "not bound to a device")
	session.Close()
	_, err = session.NumReplicas()
	wantError(t, err, mrt.FailedPrecondition, "Session used after Close")
}

func TestARunnerServesEveryReplica(t *testing.T) {
	model := loadReplicatedModel(t)
	runner := newRunner(t, model)
	if n, err := runner.NumReplicas(); err != nil || n != replicas {
		t.Fatalf("NumReplicas %d, %v", n, err)
	}
	for r := uint32(0); r < replicas; r++ {
		future, err := runner.ExecuteAsyncOn(r, map[string]mrt.Tensor{"x": mrt.NewTensor(replicaInput(r, 3), 1, addOneN)})
		if err != nil {
			t.Fatal(err)
		}
		outputs, err := future.Wait(testContext(t))
		future.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := mrt.Values[float32](outputs["y"])
		if fmt.Sprint(got) != fmt.Sprint(plusOne(replicaInput(r, 3))) {
			t.Fatalf("replica %d: %v", r, got)
		}
	}
	_, err := runner.ExecuteAsyncOn(replicas, map[string]mrt.Tensor{"x": mrt.NewTensor(replicaInput(0, 0), 1, addOneN)})
	wantError(t, err, mrt.InvalidArgument, "2")
}

func TestAModelThatIsNotReplicatedHasReplicaZero(t *testing.T) {
	session := newBoundSession(t, loadModel(t))
	if n, err := session.NumReplicas(); err != nil || n != 1 {
		t.Fatalf("NumReplicas %d, %v", n, err)
	}
	manager, err := session.CreateQueueManagerForReplica(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	manager.Close()
	_, err = session.CreateQueueManagerForReplica(1, nil)
	wantError(t, err, mrt.InvalidArgument, "has 1 replica")
}
