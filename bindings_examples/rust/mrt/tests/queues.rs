//! Queue managers: buffers move into queues as Vec<T> and come back through
//! completion closures; the bytes reach the device unchanged, from a caller
//! playing the device (transfer) and from a session running the mlp.
mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{device_wait, image, model, runner, CLASSES, IMAGE};
use mrt::*;

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

#[test]
fn transfers_copy_the_enqueued_bytes_and_return_the_buffers() {
    let model = model();
    let manager = QueueManager::new(&model, QueueManagerConfig::default()).unwrap();
    assert_eq!(manager.input_names().unwrap(), vec!["image"]);
    assert_eq!(manager.output_names().unwrap(), vec!["probs"]);
    let input = manager.input_queue("image").unwrap();
    assert_eq!(input.info().data_type, Some(DataType::F32));
    assert_eq!(input.info().shape, vec![1, 784]);
    assert_eq!((input.info().size_in_bytes, input.info().sample_size_bytes), (3136, 3136));

    let image = image();
    let (done_tx, done_rx) = mpsc::channel();
    input.enqueue_then(image.clone(), move |buffer| done_tx.send(buffer).unwrap()).unwrap();
    let mut device = vec![0u8; 3136];
    manager.transfer("image", &mut device).unwrap();
    assert_eq!(device, f32_bytes(&image));
    assert_eq!(done_rx.recv_timeout(Duration::from_secs(10)).unwrap(), image);

    let output = manager.output_queue("probs").unwrap();
    let (out_tx, out_rx) = mpsc::channel();
    output.enqueue(vec![0f32; CLASSES], move |buffer| out_tx.send(buffer).unwrap()).unwrap();
    let written: Vec<f32> = (0..CLASSES).map(|i| i as f32 * 0.5).collect();
    let mut device = f32_bytes(&written);
    manager.transfer("probs", &mut device).unwrap();
    assert_eq!(out_rx.recv_timeout(Duration::from_secs(10)).unwrap(), written);
}

#[test]
fn ring_size_overrides_size_single_rings() {
    let model = model();
    // image and probs are both Main anchors: probs gets its own multiplier.
    let config = QueueManagerConfig {
        ring_size_multiplier: 2,
        ring_size_overrides: [("probs".to_string(), 5)].into_iter().collect(),
        ..QueueManagerConfig::default()
    };
    let manager = QueueManager::new(&model, config).unwrap();
    assert_eq!(manager.input_queue("image").unwrap().info().num_buffers, 2); // batch 1
    assert_eq!(manager.output_queue("probs").unwrap().info().num_buffers, 5);
    let unknown = QueueManagerConfig {
        ring_size_overrides: [("nope".to_string(), 2)].into_iter().collect(),
        ..QueueManagerConfig::default()
    };
    let err = QueueManager::new(&model, unknown).err().expect("an unknown anchor was accepted");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("the model has no anchor named 'nope'"), "{err}");
    let zero = QueueManagerConfig {
        ring_size_overrides: [("probs".to_string(), 0)].into_iter().collect(),
        ..QueueManagerConfig::default()
    };
    let err = QueueManager::new(&model, zero).err().expect("a multiplier of 0 was accepted");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("('probs'): the multiplier must be at least 1, got 0"), "{err}");
}

#[test]
fn bad_buffers_are_refused_and_disconnect_cancels_until_reset() {
    let model = model();
    let mut manager = QueueManager::new(&model, QueueManagerConfig::default()).unwrap();
    {
        let input = manager.input_queue("image").unwrap();
        let err = input.enqueue(vec![0f64; IMAGE]).expect_err("f64 for an f32 queue must fail");
        assert_eq!(err.status(), Status::InvalidArgument);
        assert!(err.message().contains("queue 'image' carries F32, got a buffer of F64"), "{err}");
        let err = input.enqueue(vec![0f32; IMAGE - 1]).expect_err("a partial sample must fail");
        assert!(err.message().contains("whole samples of 3136 bytes"), "{err}");
        let err = manager.transfer("image", &mut [0u8; 16]).expect_err("a short device buffer must fail");
        assert!(err.message().contains("3136 bytes, got 16"), "{err}");
        let err = manager.input_queue("nope").expect_err("an unknown queue must fail");
        assert_eq!(err.status(), Status::NotFound);
        assert!(err.message().contains("nope"), "{err}");

        input.disconnect().unwrap();
        assert!(!input.is_connected().unwrap());
        let err = input.enqueue(vec![0f32; IMAGE]).expect_err("a disconnected queue must refuse");
        assert_eq!(err.status(), Status::Cancelled);
        // The device gets zeros from a disconnected input.
        let mut device = vec![1u8; 3136];
        manager.transfer("image", &mut device).unwrap();
        assert!(device.iter().all(|&b| b == 0));
    }
    manager.reset_all().unwrap();
    assert!(manager.input_queue("image").unwrap().is_connected().unwrap());
}

#[test]
fn the_timeout_callback_lets_the_producer_flush_a_waiting_device() {
    let model = model();
    let (waiting_tx, waiting_rx) = mpsc::channel();
    let config = QueueManagerConfig {
        timeout: Some(Duration::from_millis(5)),
        on_timeout: Some(Box::new(move |name: &str, direction, done| {
            let _ = waiting_tx.send((name.to_string(), direction, done));
        })),
        ..QueueManagerConfig::default()
    };
    let manager = QueueManager::new(&model, config).unwrap();
    let input = manager.input_queue("image").unwrap();
    let device = std::thread::scope(|scope| {
        let device = scope.spawn(|| {
            let mut device = vec![7u8; 3136];
            manager.transfer("image", &mut device).map(|()| device)
        });
        let (name, direction, done) = waiting_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!((name.as_str(), direction, done), ("image", TensorType::Input, 0));
        input.flush().unwrap();
        device.join().unwrap()
    });
    assert!(device.unwrap().iter().all(|&b| b == 0), "a flushed input is zeros");
}

#[test]
fn a_session_feeds_its_device_from_the_queues() {
    let model = model();
    let image = image();
    let mut expected = [0f32; CLASSES];
    runner(&model).execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut expected)]).unwrap();

    let session = Session::new(&model, &SessionConfig::default()).unwrap();
    let device = DeviceManager::new().unwrap().device(DeviceRequest::ForModel(&model), &[], device_wait()).unwrap();
    session.bind_to_device(&device).unwrap();
    let manager = session.create_queue_manager(QueueManagerConfig::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    manager.input_queue("image").unwrap().enqueue(image).unwrap();
    manager.output_queue("probs").unwrap().enqueue(vec![0f32; CLASSES], move |probs| tx.send(probs).unwrap()).unwrap();
    session.run_main_programs().unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), expected.to_vec());
    let err = manager.transfer("image", &mut vec![0u8; 3136]).expect_err("a session's manager has its own device");
    assert_eq!(err.status(), Status::FailedPrecondition);
    // The manager outlives its session: detached, its calls fail cleanly.
    let input = manager.input_queue("image").unwrap();
    drop(session);
    let err = input.enqueue(vec![0f32; IMAGE]).expect_err("detached");
    assert_eq!(err.status(), Status::FailedPrecondition);
    assert!(err.message().contains("its session was destroyed"), "{err}");
    assert_eq!(manager.output_names().unwrap(), vec!["probs"]);
}
