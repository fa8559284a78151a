//! What the integration tests share: the mlp example model
//! (MRT_TEST_MODEL=<path to mlp.popef>, set by tests/bindings/rust) and the
//! replicated one (MRT_TEST_REPLICATED_MODEL), a
//! runner that waits for a free simulated device, and a tiny executor.
#![allow(dead_code)] // each test binary uses its own part of this module

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use mrt::{DeviceWait, Input, Model, ModelRunner, Output, RunnerConfig};

pub const IMAGE: usize = 784;
pub const CLASSES: usize = 10;

pub fn model() -> Model {
    let path = std::env::var("MRT_TEST_MODEL")
        .expect("MRT_TEST_MODEL must name the mlp example model (mrt-gen mlp -o mlp.popef)");
    Model::load(path).expect("loading the mlp model")
}

/// add_one (x, y: f32 [1, 16]) compiled with replication factor 2
/// (MRT_TEST_REPLICATED_MODEL=<path to replicated.popef>, mrt-gen replicated).
pub fn replicated_model() -> Model {
    let path = std::env::var("MRT_TEST_REPLICATED_MODEL").expect(
        "MRT_TEST_REPLICATED_MODEL must name the replicated example model (mrt-gen replicated -o replicated.popef)",
    );
    Model::load(path).expect("loading the replicated model")
}

/// cargo runs tests on several threads and each runner holds a simulated
/// device: wait for one rather than fail when all are busy.
pub fn device_wait() -> DeviceWait {
    DeviceWait::Timeout { timeout: Duration::from_secs(120), retry_every: Duration::from_millis(2) }
}

pub fn runner(model: &Model) -> ModelRunner {
    ModelRunner::with_config(model, RunnerConfig { device_wait: device_wait(), ..RunnerConfig::default() })
        .expect("creating a runner")
}

/// The mlp's probabilities for one image, through execute.
pub fn sync_probs(runner: &ModelRunner, image: &[f32]) -> [f32; CLASSES] {
    let mut probs = [0f32; CLASSES];
    runner.execute(&[Input::new("image", image)], &mut [Output::new("probs", &mut probs)]).unwrap();
    probs
}

pub fn image() -> Vec<f32> {
    (0..IMAGE).map(|i| ((i * 37 % 101) as f32) / 101.0).collect()
}

pub fn wait_until(condition: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Wakes the thread blocked in block_on.
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread, parked between polls: only
/// a wake (from the library's completion callback) lets it make progress.
/// Returns the output and how many times it was polled.
pub fn block_on<F: Future>(future: F) -> (F::Output, usize) {
    let mut future = Box::pin(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(output) = Pin::as_mut(&mut future).poll(&mut context) {
            return (output, polls);
        }
        std::thread::park();
    }
}
