//! The two-phase enqueue (enqueue_lock, then complete) on a manager without
//! a session, the test playing the device: entries are the ring's slots in
//! turn, buffers pass through and come back, a relock returns the locked
//! slot, and misuse is refused with its status and message, the buffer
//! dropped and the queue still usable.
mod common;

use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::{model, CLASSES, IMAGE};
use mrt::*;

const RING: i64 = 2; // ring_size_multiplier 2, batch 1

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn manager(model: &Model) -> QueueManager {
    QueueManager::new(model, QueueManagerConfig { ring_size_multiplier: RING, ..QueueManagerConfig::default() })
        .unwrap()
}

fn expect_error(result: Result<()>, status: Status, fragment: &str) {
    let err = result.expect_err(fragment);
    assert_eq!(err.status(), status, "{err}");
    assert!(err.message().contains(fragment), "'{err}' lacks '{fragment}'");
}

/// Completes `entry` with a buffer whose closure holds a witness: the call
/// fails with `status` and `fragment`, and buffer and closure are dropped.
fn expect_refused(entry: InputEntry<'_>, status: Status, fragment: &str) {
    let witness = Arc::new(());
    let held = witness.clone();
    expect_error(entry.complete(vec![2f32; IMAGE], move |_| drop(held)), status, fragment);
    assert_eq!(Arc::strong_count(&witness), 1);
}

#[test]
fn entries_are_ring_slots_and_buffers_pass_through() {
    let model = model();
    let manager = manager(&model);
    let (input, output) = (manager.input_queue("image").unwrap(), manager.output_queue("probs").unwrap());
    let (read_tx, read_rx) = mpsc::channel();
    let (written_tx, written_rx) = mpsc::channel();
    for s in 0..RING {
        let entry = input.enqueue_lock().unwrap();
        assert_eq!(entry.slot(), s);
        assert_eq!(input.enqueue_lock().unwrap().slot(), s); // relocked
        let tx = read_tx.clone();
        entry.complete(vec![s as f32; IMAGE], move |buffer| tx.send(buffer).unwrap()).unwrap();
        let slot = output.enqueue_lock().unwrap();
        assert_eq!(slot.slot(), s);
        let tx = written_tx.clone();
        slot.complete(vec![0f32; CLASSES], move |buffer| tx.send(buffer).unwrap()).unwrap();
    }
    for s in 0..RING {
        let mut device = vec![0u8; IMAGE * 4];
        manager.transfer("image", &mut device).unwrap();
        assert_eq!(device, f32_bytes(&vec![s as f32; IMAGE]));
        assert_eq!(read_rx.recv_timeout(Duration::from_secs(10)).unwrap(), vec![s as f32; IMAGE]);
        let written = vec![10.0 + s as f32; CLASSES];
        manager.transfer("probs", &mut f32_bytes(&written)).unwrap();
        assert_eq!(written_rx.recv_timeout(Duration::from_secs(10)).unwrap(), written);
    }
    assert_eq!(input.enqueue_lock().unwrap().slot(), 0); // the ring wraps
}

#[test]
fn misuse_is_refused_and_the_queue_stays_usable() {
    let model = model();
    let manager = manager(&model);
    let input = manager.input_queue("image").unwrap();
    let entry = input.enqueue_lock().unwrap();
    expect_error(
        input.enqueue(vec![0f32; IMAGE]),
        Status::FailedPrecondition,
        "input queue 'image': an entry is locked",
    );
    expect_error(input.flush(), Status::FailedPrecondition, "an entry is locked");
    expect_error(entry.complete(vec![0f64; IMAGE], drop), Status::InvalidArgument, "carries F32");

    // Two locks of one slot: the first complete publishes it, the second
    // finds no lock and its buffer (with its closure) is dropped, not kept.
    let (first, second) = (input.enqueue_lock().unwrap(), input.enqueue_lock().unwrap());
    assert_eq!(first.slot(), second.slot());
    first.complete(vec![1f32; IMAGE], drop).unwrap();
    expect_refused(
        second,
        Status::FailedPrecondition,
        "mrt_input_queue_enqueue_complete: input queue 'image': no entry is locked",
    );
    let mut device = vec![0u8; IMAGE * 4];
    manager.transfer("image", &mut device).unwrap();
    assert_eq!(device, f32_bytes(&vec![1f32; IMAGE]));

    // A disconnect since the lock: Cancelled, the buffer dropped.
    let entry = input.enqueue_lock().unwrap();
    input.disconnect().unwrap();
    expect_refused(entry, Status::Cancelled, "input queue 'image' is disconnected");
    expect_error(input.enqueue_lock().map(|_| ()), Status::Cancelled, "is disconnected");
}
