//! In-model replication: the replicated model (add_one compiled with
//! replication factor 2) served per replica by a Session - a queue manager
//! and a thread running Main for each replica, callbacks bound per replica,
//! handler factories told the replica - and by a ModelRunner; and the errors
//! naming a bad replica.
mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use common::{device_wait, replicated_model};
use mrt::*;

const REPLICAS: u32 = 2;
const N: usize = 16;

/// Distinct for every (replica, request).
fn replica_input(replica: u32, request: usize) -> Vec<f32> {
    (0..N).map(|i| (1000 * replica as usize + 20 * request + i) as f32).collect()
}

fn plus_one(values: &[f32]) -> Vec<f32> {
    values.iter().map(|v| v + 1.0).collect()
}

fn as_f32(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn feed(values: Vec<f32>) -> AnchorCallback {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    Box::new(move |buffer: &mut [u8]| buffer.copy_from_slice(&bytes))
}

fn bound_session(model: &Model) -> Session {
    let session = Session::new(model, &SessionConfig::default()).unwrap();
    let device = DeviceManager::new().unwrap().device(DeviceRequest::ForModel(model), &[], device_wait()).unwrap();
    session.bind_to_device(&device).unwrap();
    session
}

fn expect_error<T: std::fmt::Debug>(result: Result<T>, status: Status, fragment: &str) {
    let err = result.expect_err(fragment);
    assert_eq!(err.status(), status, "{err}");
    assert!(err.message().contains(fragment), "'{err}' lacks '{fragment}'");
}

#[test]
fn a_queue_manager_and_a_thread_per_replica() {
    const REQUESTS: usize = 20;
    let model = replicated_model();
    let mut session = bound_session(&model);
    assert_eq!(session.num_replicas().unwrap(), REPLICAS);
    let managers: Vec<QueueManager> = (0..REPLICAS)
        .map(|r| session.create_queue_manager_for_replica(r, QueueManagerConfig::default()).unwrap())
        .collect();
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for mut replica in session.replicas().unwrap() {
            scope.spawn(move || {
                for _ in 0..REQUESTS {
                    replica.run_main_programs().unwrap();
                }
            });
        }
        // This thread is every queue's one producer; each replica's thread drains its own.
        for request in 0..REQUESTS {
            for (r, manager) in (0..REPLICAS).zip(&managers) {
                manager.input_queue("x").unwrap().enqueue(replica_input(r, request)).unwrap();
                let tx = tx.clone();
                manager
                    .output_queue("y")
                    .unwrap()
                    .enqueue(vec![-1f32; N], move |y| tx.send((r, request, y)).unwrap())
                    .unwrap();
            }
        }
    });
    drop(tx);
    let results: Vec<(u32, usize, Vec<f32>)> = rx.iter().collect();
    assert_eq!(results.len(), REQUESTS * REPLICAS as usize);
    for (r, request, y) in results {
        assert_eq!(y, plus_one(&replica_input(r, request)), "replica {r}, request {request}");
    }
}

#[test]
fn callbacks_and_factories_per_replica() {
    let model = replicated_model();
    let session = bound_session(&model);
    let results = Arc::new(Mutex::new(vec![Vec::new(); REPLICAS as usize]));
    for r in 0..REPLICAS {
        session.set_replica_callback("x", r, Some(feed(replica_input(r, 0)))).unwrap();
        let sink = results.clone();
        let drain: AnchorCallback =
            Box::new(move |buffer: &mut [u8]| sink.lock().unwrap()[r as usize] = as_f32(buffer));
        session.set_replica_callback("y", r, Some(drain)).unwrap();
    }
    session.run_main_programs().unwrap(); // every replica together, each on its own thread
    for r in 0..REPLICAS {
        assert_eq!(results.lock().unwrap()[r as usize], plus_one(&replica_input(r, 0)));
    }

    let mut asked = Vec::new();
    session
        .set_user_input_handler(
            |anchor| {
                asked.push((anchor.handle.clone(), anchor.replica));
                Some(feed(replica_input(anchor.replica, 5)))
            },
            None,
            false,
        )
        .unwrap();
    assert_eq!(asked, vec![("x".to_string(), 0), ("x".to_string(), 1)]);
    for r in 0..REPLICAS {
        session.run_main_programs_for_replica(r).unwrap();
        assert_eq!(results.lock().unwrap()[r as usize], plus_one(&replica_input(r, 5)));
    }
}

#[test]
fn a_bad_replica_is_named() {
    let model = replicated_model();
    let session = bound_session(&model);
    expect_error(session.run_main_programs_for_replica(2), Status::InvalidArgument, "replica 2 out of range");
    expect_error(session.set_replica_callback("x", 2, Some(feed(vec![0.0; N]))), Status::InvalidArgument, "replica 2");
    expect_error(
        session.create_queue_manager_for_replica(2, QueueManagerConfig::default()),
        Status::InvalidArgument,
        "replica 2 out of range: the session's model 'replicated' has 2 replicas",
    );
    expect_error(
        session.create_queue_manager(QueueManagerConfig::default()),
        Status::InvalidArgument,
        "each with its own queues",
    );
    session.stop().unwrap();
    expect_error(session.run_main_programs_for_replica(0), Status::FailedPrecondition, "");
    session.reload().unwrap();
    drop(session.create_queue_manager_for_replica(1, QueueManagerConfig::default()).unwrap());
    session.run_main_programs_for_replica(1).unwrap(); // zeros in: the manager is gone
    let unbound = Session::new(&model, &SessionConfig::default()).unwrap();
    expect_error(unbound.run_main_programs_for_replica(0), Status::FailedPrecondition, "not bound to a device");
}

#[test]
fn a_runner_serves_every_replica() {
    let model = replicated_model();
    let runner =
        ModelRunner::with_config(&model, RunnerConfig { device_wait: device_wait(), ..RunnerConfig::default() })
            .unwrap();
    assert_eq!(runner.num_replicas().unwrap(), REPLICAS);
    for r in 0..REPLICAS {
        let x = replica_input(r, 3);
        let mut y = vec![0f32; N];
        runner.execute_on(r, &[Input::new("x", &x)], &mut [Output::new("y", &mut y)]).unwrap();
        assert_eq!(y, plus_one(&x));
    }
    let x = replica_input(0, 0);
    let mut y = vec![0f32; N];
    expect_error(
        runner.execute_on(REPLICAS, &[Input::new("x", &x)], &mut [Output::new("y", &mut y)]),
        Status::InvalidArgument,
        "2",
    );
}
