//! Inspecting PopEF files as far as they can be read (mrt_popef_listing_*),
//! what mrt-info shows: every blob whose framing could be followed, with its
//! checksums and descriptor even when they are bad, the models the files
//! hold, and the first problem found. A damaged, truncated or missing file
//! is not an Err: the listing says what is wrong and where.
use std::ffi::CStr;
use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{check, string_from_c, Error, Result, Status};
use crate::ffi::{name_to_c, slice, CStrings, SizedStruct};
use crate::model::Model;
use crate::sys;
use crate::tensor::DataType;

/// The kinds of PopEF blob (mrt_blob_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlobType {
    Metadata = 1,
    Executable = 2,
    TensorData = 3,
    FeedData = 4,
    Opaque = 5,
}

impl BlobType {
    fn from_raw(raw: i32) -> Option<BlobType> {
        [BlobType::Metadata, BlobType::Executable, BlobType::TensorData, BlobType::FeedData, BlobType::Opaque]
            .into_iter()
            .find(|kind| *kind as i32 == raw)
    }

    /// Its name as PopEF spells it ("TensorData"; mrt_blob_type_name).
    pub fn name(self) -> &'static str {
        blob_type_name(self as i32)
    }
}

impl fmt::Display for BlobType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name of the blob type `raw` (an mrt_blob_type) as PopEF spells it,
/// "Unknown" for a value that is none (mrt_blob_type_name).
pub fn blob_type_name(raw: i32) -> &'static str {
    // Static ASCII text in the library, never NULL.
    unsafe { CStr::from_ptr(sys::mrt_blob_type_name(raw)) }.to_str().unwrap_or("Unknown")
}

/// One listed blob (mrt_blob_info), copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobInfo {
    /// Index of its file in the paths given.
    pub file: usize,
    /// Its position in the file, from 0.
    pub index: usize,
    /// None for a kind this crate does not know.
    pub blob_type: Option<BlobType>,
    /// The model it belongs to; "" if its descriptor is unreadable.
    pub executable: String,
    /// "" for Metadata and if its descriptor is unreadable.
    pub name: String,
    /// Byte offset of the blob's header in the file.
    pub offset: u64,
    /// Bytes after the header.
    pub payload_size: u64,
    /// The payload's XXH3-64 as the header records it ...
    pub stored_checksum: u64,
    /// ... and as computed.
    pub computed_checksum: u64,
    /// Why the descriptor could not be read; "" if it could.
    pub problem: String,
    /// TensorData, FeedData: the element type; None for other blobs.
    pub data_type: Option<DataType>,
    /// TensorData, FeedData: the tensor's shape.
    pub shape: Vec<i64>,
    /// FeedData: tensors of that shape; TensorData: 1; others: 0.
    pub num_tensors: u64,
    /// Bytes of its data section; 0 if the descriptor is unreadable.
    pub data_size: u64,
}

impl BlobInfo {
    /// Whether the payload's checksum differs from the stored one.
    pub fn damaged(&self) -> bool {
        self.stored_checksum != self.computed_checksum
    }
}

/// One file of a listing: its path as given, its size (0 if it could not be
/// opened) and its listed blobs, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PopefFile {
    pub path: String,
    pub size: u64,
    pub blobs: Vec<BlobInfo>,
}

/// What list_popef found.
#[derive(Debug)]
pub struct PopefListing {
    pub files: Vec<PopefFile>,
    /// The first problem, as the Err loading the models would have been;
    /// None if the files are sound and hold the models asked for.
    pub error: Option<Error>,
    /// The models loaded (in the order of their Metadata blobs).
    pub models: Vec<Model>,
}

impl PopefListing {
    /// Every listed blob, file by file.
    pub fn blobs(&self) -> impl Iterator<Item = &BlobInfo> {
        self.files.iter().flat_map(|file| file.blobs.iter())
    }
}

/// The library's listing, destroyed when dropped (the models outlive it).
struct RawListing(NonNull<sys::mrt_popef_listing>);

impl Drop for RawListing {
    fn drop(&mut self) {
        unsafe { sys::mrt_popef_listing_destroy(self.0.as_ptr()) }
    }
}

impl RawListing {
    fn error(&self) -> Result<Option<Error>> {
        let (mut status, mut message) = (0, ptr::null());
        check(unsafe { sys::mrt_popef_listing_error(self.0.as_ptr(), &mut status, &mut message) })?;
        Ok(Status::from_code(status).map(|status| Error::new(status, unsafe { string_from_c(message) })))
    }

    fn file(&self, file: usize) -> Result<PopefFile> {
        let (mut path, mut size, mut num_blobs) = (ptr::null(), 0u64, 0usize);
        check(unsafe { sys::mrt_popef_listing_file(self.0.as_ptr(), file, &mut path, &mut size, &mut num_blobs) })?;
        let blobs = (0..num_blobs).map(|index| self.blob(file, index)).collect::<Result<Vec<_>>>()?;
        Ok(PopefFile { path: unsafe { string_from_c(path) }, size, blobs })
    }

    fn blob(&self, file: usize, index: usize) -> Result<BlobInfo> {
        let mut raw = sys::mrt_blob_info::sized();
        check(unsafe { sys::mrt_popef_listing_blob(self.0.as_ptr(), file, index, &mut raw) })?;
        Ok(unsafe {
            BlobInfo {
                file: raw.file,
                index: raw.index,
                blob_type: BlobType::from_raw(raw.type_),
                executable: string_from_c(raw.executable),
                name: string_from_c(raw.name),
                offset: raw.offset,
                payload_size: raw.payload_size,
                stored_checksum: raw.stored_checksum,
                computed_checksum: raw.computed_checksum,
                problem: string_from_c(raw.problem),
                data_type: if raw.data_type < 0 { None } else { DataType::from_raw(raw.data_type) },
                shape: slice(raw.shape, raw.rank).to_vec(),
                num_tensors: raw.num_tensors,
                data_size: raw.data_size,
            }
        })
    }

    fn models(&self) -> Result<Vec<Model>> {
        let mut count = 0usize;
        check(unsafe { sys::mrt_popef_listing_num_models(self.0.as_ptr(), &mut count) })?;
        (0..count)
            .map(|index| {
                let mut raw = ptr::null_mut();
                check(unsafe { sys::mrt_popef_listing_model(self.0.as_ptr(), index, &mut raw) })?;
                Ok(unsafe { Model::from_raw(raw) })
            })
            .collect()
    }
}

/// Lists the blobs of the PopEF files `paths` (in order) and, if every
/// file's framing is sound, loads the model named `model_name`, or every
/// model the files hold if None. Problems in the files are not an Err: they
/// are the listing's `error`. Err(InvalidArgument) for no paths or an empty
/// model_name.
pub fn list_popef<P: AsRef<Path>>(paths: &[P], model_name: Option<&str>) -> Result<PopefListing> {
    let c_paths = CStrings::paths(paths)?;
    let name = model_name.map(name_to_c).transpose()?;
    let mut raw = ptr::null_mut();
    check(unsafe {
        sys::mrt_popef_listing_create(
            c_paths.as_ptr(),
            c_paths.len(),
            name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
            &mut raw,
        )
    })?;
    let listing = RawListing(NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL listing"));
    Ok(PopefListing {
        error: listing.error()?,
        files: (0..c_paths.len()).map(|file| listing.file(file)).collect::<Result<Vec<_>>>()?,
        models: listing.models()?,
    })
}
