package mrt_test

// Session.DeviceCycles: each replica's modelled device cycles of a session
// driven by hand (as mrt-bench reads them), and its bad arguments. Models:
// the replicated one (add_one, R = 2) and the mlp.

import (
	"fmt"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

func cyclesOf(t *testing.T, session *mrt.Session, replica uint32) uint64 {
	t.Helper()
	reading, err := session.DeviceCycles(replica)
	if err != nil || reading.ClockHz <= 1e8 {
		t.Fatalf("DeviceCycles(%d): %+v, %v", replica, reading, err)
	}
	return reading.Cycles
}

// runOneRequest runs one add_one request through replica's own queues.
func runOneRequest(t *testing.T, session *mrt.Session, replica uint32) {
	t.Helper()
	manager, err := session.CreateQueueManagerForReplica(replica, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	x, _ := manager.InputQueue("x")
	y, _ := manager.OutputQueue("y")
	in := replicaInput(replica, 0)
	out := make([]byte, addOneN*4)
	if err := x.Enqueue(testContext(t), mrt.NewTensor(in).Data, nil); err != nil {
		t.Fatal(err)
	}
	if err := y.Enqueue(testContext(t), out, nil); err != nil {
		t.Fatal(err)
	}
	if err := session.RunMainProgramsForReplica(testContext(t), replica); err != nil {
		t.Fatal(err)
	}
	if got, want := floatsOf(out), plusOne(in); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replica %d: %v, want %v", replica, got, want)
	}
}

// A replica's cycles grow when that replica runs, and only then.
func TestEachReplicaCountsItsOwnCycles(t *testing.T) {
	session := newBoundSession(t, loadReplicatedModel(t))
	runOneRequest(t, session, 0)
	afterFirst := [2]uint64{cyclesOf(t, session, 0), cyclesOf(t, session, 1)}
	if afterFirst[0] == 0 {
		t.Fatal("replica 0 ran no cycles")
	}
	runOneRequest(t, session, 1)
	if got := cyclesOf(t, session, 0); got != afterFirst[0] {
		t.Fatalf("replica 0: %d cycles, then %d without running", afterFirst[0], got)
	}
	if got := cyclesOf(t, session, 1); got <= afterFirst[1] {
		t.Fatalf("replica 1: %d cycles, then %d after a run", afterFirst[1], got)
	}
}

func TestDeviceCyclesOfAModelThatIsNotReplicated(t *testing.T) {
	model := loadModel(t)
	session := newBoundSession(t, model)
	if cycles := cyclesOf(t, session, 0); cycles != 0 { // nothing has run since the load
		t.Fatalf("%d cycles before any run", cycles)
	}
	input := mrt.NewTensor(image(0.5)).Data
	if err := session.SetCallbackForAnchor(userAnchor(t, session, mrt.UserInputAnchors),
		func(buffer []byte) { copy(buffer, input) }); err != nil {
		t.Fatal(err)
	}
	if err := session.SetCallbackForAnchor(userAnchor(t, session, mrt.UserOutputAnchors), nil); err != nil {
		t.Fatal(err)
	}
	if err := session.RunMainPrograms(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if cycles := cyclesOf(t, session, 0); cycles == 0 {
		t.Fatal("no cycles after a run")
	}
}

func TestDeviceCyclesNamesABadReplica(t *testing.T) {
	session := newBoundSession(t, loadReplicatedModel(t))
	_, err := session.DeviceCycles(2)
	wantError(t, err, mrt.InvalidArgument,
		"mrt_session_device_cycles: replica 2 out of range: the session's model 'replicated' has 2 replicas")
	cyclesOf(t, session, 1) // still usable
	runOneRequest(t, session, 1)
	session.Close()
	_, err = session.DeviceCycles(0)
	wantError(t, err, mrt.FailedPrecondition, "Session used after Close")
}
