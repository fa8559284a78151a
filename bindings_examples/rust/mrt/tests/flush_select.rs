//! on_flush_select (flush_select_callback): the queues it adds are the ones
//! a timeout flush pads. Only the output padded: the device, still waiting
//! for the image, never runs on padding, so a request's own output entry
//! sits behind the padded one and the request is still pending when the
//! runner goes; every queue padded: the runner serves on.
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{image, model, sync_probs, wait_until};
use mrt::*;

/// A runner timing out every 2 ms while idle, padding what `choose` adds,
/// once it was asked `calls` times; and the tensor ids it was asked for.
fn runner_choosing(
    model: &Model,
    calls: usize,
    choose: impl Fn(&mut FlushSelection<'_>) -> Result<()> + Send + 'static,
) -> (ModelRunner, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let config = RunnerConfig {
        device_wait: common::device_wait(),
        timeout: Some(Duration::from_millis(2)),
        ring_buffer_size_multiplier: 1,
        on_flush_select: Some(Box::new(move |tensor_id: &str, selection: &mut FlushSelection<'_>| {
            choose(selection).expect("adding a queue");
            record.lock().unwrap().push(tensor_id.to_string());
        })),
        ..RunnerConfig::default()
    };
    let runner = ModelRunner::with_config(model, config).unwrap();
    assert!(wait_until(|| asked.lock().unwrap().len() >= calls), "flush_select_callback not called");
    (runner, asked)
}

#[test]
fn naming_every_queue_lets_the_device_go_on() {
    let model = model();
    let image = image();
    let reference = sync_probs(&common::runner(&model), &image);
    let (runner, asked) = runner_choosing(&model, 3, |selection| {
        selection.add_input("image")?;
        selection.add_output("probs")
    });
    assert_eq!(sync_probs(&runner, &image), reference);
    drop(runner);
    assert!(asked.lock().unwrap().iter().all(|id| id == "image"));
}

#[test]
fn only_the_named_queues_are_padded() {
    let model = model();
    let image = image();
    let (runner, _) = runner_choosing(&model, 1, |selection| selection.add_output("probs"));
    let pending = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    assert!(!pending.wait_timeout(Some(Duration::from_millis(200))), "served on padding");
    drop(runner);
    assert!(pending.is_ready());
    assert_eq!(pending.wait().err().map(|e| e.status()), Some(Status::Cancelled));
}

#[test]
fn a_queue_that_is_not_there_pads_every_queue() {
    let model = model();
    let image = image();
    let reference = sync_probs(&common::runner(&model), &image);
    let (runner, _) = runner_choosing(&model, 3, |selection| selection.add_input("nope"));
    assert_eq!(sync_probs(&runner, &image), reference);
}

#[test]
fn misuse_is_refused() {
    let model = model();
    let nul_refused = Arc::new(AtomicUsize::new(0));
    let count = nul_refused.clone();
    let (runner, _) = runner_choosing(&model, 1, move |selection| {
        let err = selection.add_input("ima\0ge").unwrap_err();
        assert_eq!(err.status(), Status::InvalidArgument);
        count.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    drop(runner);
    assert!(nul_refused.load(Ordering::SeqCst) >= 1);
    let both = RunnerConfig {
        on_flush: Some(Box::new(|_: &str| {})),
        on_flush_select: Some(Box::new(|_: &str, _: &mut FlushSelection<'_>| {})),
        ..RunnerConfig::default()
    };
    let err = ModelRunner::with_config(&model, both).err().expect("both flush callbacks accepted");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.to_string().contains("on_flush and on_flush_select are both set"), "{err}");
}
