//! list_popef (what mrt-info shows) on the mlp model and variants of it
//! written here: every blob of a sound file, the model loaded from one file
//! or split over two, what is left of damaged and missing files with the
//! first problem and where it is, and bad arguments.
use std::path::PathBuf;

use mrt::*;

const HEADER_BYTES: u64 = 64; // a blob's header; its payload follows

fn model_path() -> String {
    std::env::var("MRT_TEST_MODEL").expect("MRT_TEST_MODEL must name the mlp example model")
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn expect_problem(listing: &PopefListing, status: Status, fragment: &str) {
    let error = listing.error.as_ref().expect("a problem");
    assert_eq!(error.status(), status, "{error}");
    assert!(error.message().contains(fragment), "'{error}' lacks '{fragment}'");
    assert!(!error.message().contains('\n'), "{error}");
}

#[test]
fn a_sound_file_lists_every_blob_and_its_model() {
    let path = model_path();
    let listing = list_popef(&[&path], None).unwrap();
    assert!(listing.error.is_none(), "{:?}", listing.error);
    assert_eq!(listing.files.len(), 1);
    let file = &listing.files[0];
    assert_eq!((file.path.as_str(), file.size), (path.as_str(), std::fs::metadata(&path).unwrap().len()));
    assert_eq!(file.blobs[0].blob_type, Some(BlobType::Metadata));
    assert_eq!(file.blobs[0].offset, 0);
    assert_eq!(file.blobs[1].blob_type, Some(BlobType::Executable));
    let model = &listing.models[0];
    assert_eq!(listing.models.len(), 1);
    for (index, blob) in listing.blobs().enumerate() {
        assert_eq!((blob.file, blob.index, blob.executable.as_str(), blob.problem.as_str()), (0, index, "mlp", ""));
        assert!(!blob.damaged());
    }
    let w1 = listing.blobs().find(|b| b.name == "w1").unwrap();
    assert_eq!(w1.blob_type, Some(BlobType::TensorData));
    assert_eq!((w1.data_type, w1.shape.clone(), w1.num_tensors), (Some(DataType::F32), vec![784, 128], 1));
    assert_eq!(w1.data_size, model.tensor_data_bytes("w1").unwrap().len() as u64);
    assert_eq!(model.info().unwrap().executable, "mlp");
    assert_eq!(model.batching_dim().unwrap(), None);

    let named = list_popef(&[&path], Some("gamma")).unwrap();
    expect_problem(&named, Status::NotFound, "no Metadata for executable 'gamma'");
    assert!(named.models.is_empty());
    assert_eq!(named.files, listing.files); // every blob still listed
}

#[test]
fn a_model_split_over_files_and_an_incomplete_part() {
    let (graph, weights) = (scratch("listing-graph.popef"), scratch("listing-weights.popef"));
    Model::load(model_path()).unwrap().write_split(&graph, &weights).unwrap();
    let listing = list_popef(&[&graph, &weights], None).unwrap();
    assert!(listing.error.is_none(), "{:?}", listing.error);
    assert_eq!(listing.models.len(), 1);
    assert!(!listing.files[1].blobs.is_empty());
    assert!(listing.files[1].blobs.iter().all(|blob| blob.file == 1));

    let alone = list_popef(&[&graph], None).unwrap();
    expect_problem(&alone, Status::CorruptModel, "which model 'mlp' does not have");
    assert!(alone.models.is_empty());
}

#[test]
fn damaged_and_missing_files_are_listed_with_the_problem() {
    let path = model_path();
    let sound = list_popef(&[&path], None).unwrap();
    let w1 = sound.blobs().find(|b| b.name == "w1").unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[(w1.offset + HEADER_BYTES + w1.payload_size - 1) as usize] ^= 0x40; // w1's last data byte
    let damaged = scratch("listing-damaged.popef");
    std::fs::write(&damaged, &bytes).unwrap();
    let listing = list_popef(&[&damaged], None).unwrap();
    expect_problem(
        &listing,
        Status::CorruptModel,
        &format!("blob {} (TensorData) at byte {}: payload checksum mismatch", w1.index, w1.offset),
    );
    assert!(listing.models.is_empty());
    let bad: Vec<&str> = listing.blobs().filter(|b| b.damaged()).map(|b| b.name.as_str()).collect();
    assert_eq!(bad, vec!["w1"]);

    let missing = scratch("listing-missing.popef");
    let listing = list_popef(&[missing.as_path(), std::path::Path::new(&path)], None).unwrap();
    expect_problem(&listing, Status::NotFound, "listing-missing.popef");
    assert_eq!((listing.files[0].size, listing.files[0].blobs.len()), (0, 0));
    let offsets = |blobs: &[BlobInfo]| blobs.iter().map(|b| (b.name.clone(), b.offset)).collect::<Vec<_>>();
    assert_eq!(offsets(&listing.files[1].blobs), offsets(&sound.files[0].blobs)); // listed all the same
    assert!(listing.files[1].blobs.iter().all(|blob| blob.file == 1));
}

#[test]
fn bad_arguments_are_errors() {
    let none: [&str; 0] = [];
    let err = list_popef(&none, None).expect_err("no paths");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("num_paths must be at least 1"), "{err}");
    let err = list_popef(&[model_path()], Some("")).expect_err("an empty model name");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("model_name must not be empty"), "{err}");
}

#[test]
fn blob_types_are_named_as_popef_spells_them() {
    let names = [
        (BlobType::Metadata, "Metadata"),
        (BlobType::Executable, "Executable"),
        (BlobType::TensorData, "TensorData"),
        (BlobType::FeedData, "FeedData"),
        (BlobType::Opaque, "Opaque"),
    ];
    for (kind, name) in names {
        assert_eq!(kind.name(), name);
        assert_eq!(kind.to_string(), name);
        assert_eq!(blob_type_name(kind as i32), name);
    }
    for unknown in [0, 6, -1, i32::MAX] {
        assert_eq!(blob_type_name(unknown), "Unknown");
    }
}
