//! Session::device_cycles: each replica's modelled device cycles of a
//! session driven by hand (as mrt-bench reads them), and its bad arguments.
//! Models: the replicated one (add_one, R = 2) and the mlp.
mod common;

use common::{device_wait, image, model, replicated_model};
use mrt::*;

const N: usize = 16;

fn bound_session(model: &Model) -> Session {
    let session = Session::new(model, &SessionConfig::default()).unwrap();
    let device = DeviceManager::new().unwrap().device(DeviceRequest::ForModel(model), &[], device_wait()).unwrap();
    session.bind_to_device(&device).unwrap();
    session
}

fn cycles_of(session: &Session, replica: u32) -> u64 {
    let reading = session.device_cycles(replica).unwrap();
    assert!(reading.clock_hz > 1e8, "{reading:?}");
    reading.cycles
}

/// Runs one add_one request through replica `replica`'s own queues.
fn run_one_request(session: &Session, replica: u32) {
    let queues = session.create_queue_manager_for_replica(replica, QueueManagerConfig::default()).unwrap();
    let x: Vec<f32> = (0..N).map(|i| (100 * replica as usize + i) as f32).collect();
    let expected: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    queues.input_queue("x").unwrap().enqueue(x).unwrap();
    queues.output_queue("y").unwrap().enqueue(vec![0f32; N], move |y| tx.send(y).unwrap()).unwrap();
    session.run_main_programs_for_replica(replica).unwrap();
    assert_eq!(rx.recv().unwrap(), expected);
}

/// A replica's cycles grow when that replica runs, and only then.
#[test]
fn each_replica_counts_its_own_runs() {
    let model = replicated_model();
    let session = bound_session(&model);
    run_one_request(&session, 0);
    let after_first = [cycles_of(&session, 0), cycles_of(&session, 1)];
    assert!(after_first[0] > 0);
    run_one_request(&session, 1);
    assert_eq!(cycles_of(&session, 0), after_first[0]);
    assert!(cycles_of(&session, 1) > after_first[1]);
}

#[test]
fn a_model_that_is_not_replicated_has_replica_0() {
    let model = model();
    let session = bound_session(&model);
    let before = session.device_cycles(0).unwrap();
    assert_eq!(before.cycles, 0); // nothing has run since the load
    let bytes: Vec<u8> = image().iter().flat_map(|v| v.to_ne_bytes()).collect();
    let handle = |name: &str| model.anchor_by_name(name).unwrap().handle;
    session
        .set_callback(&handle("image"), Some(Box::new(move |buffer: &mut [u8]| buffer.copy_from_slice(&bytes))))
        .unwrap();
    session.set_callback(&handle("probs"), None).unwrap();
    session.run_main_programs().unwrap();
    let after = session.device_cycles(0).unwrap();
    assert!(after.cycles > 0);
    assert_eq!(after.clock_hz, before.clock_hz);
}

#[test]
fn a_bad_replica_is_named_and_the_session_stays_usable() {
    let model = replicated_model();
    let session = bound_session(&model);
    let err = session.device_cycles(2).expect_err("replica 2 of 2");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(
        err.message().contains(
            "mrt_session_device_cycles: replica 2 out of range: the session's model 'replicated' has 2 replicas"
        ),
        "{err}"
    );
    session.device_cycles(1).unwrap();
    run_one_request(&session, 1);
}
