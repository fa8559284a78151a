package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import "unsafe"

// BlobType is a kind of PopEF blob (mrt_blob_type).
type BlobType int32

const (
	BlobMetadata   BlobType = 1
	BlobExecutable BlobType = 2
	BlobTensorData BlobType = 3
	BlobFeedData   BlobType = 4
	BlobOpaque     BlobType = 5
)

// String is the type's name as PopEF spells it ("TensorData"), "Unknown"
// for a value that is no mrt_blob_type (mrt_blob_type_name).
func (t BlobType) String() string { return C.GoString(C.mrt_blob_type_name(C.int32_t(t))) }

// BlobInfo is one listed blob (mrt_blob_info), copied.
type BlobInfo struct {
	File             int      // index of its file in the paths given
	Index            int      // its position in the file, from 0
	Type             BlobType //
	Executable       string   // the model it belongs to; "" if its descriptor is unreadable
	Name             string   // "" for Metadata and if its descriptor is unreadable
	Offset           uint64   // byte offset of the blob's header in the file
	PayloadSize      uint64   // bytes after the header
	StoredChecksum   uint64   // the payload's XXH3-64 as the header records it
	ComputedChecksum uint64   // ... and as computed
	Problem          string   // why the descriptor could not be read; "" if it could
	DataType         DataType // TensorData, FeedData: the element type; -1 for other blobs
	Shape            []int64  // TensorData, FeedData: the tensor's shape
	NumTensors       uint64   // FeedData: tensors of that shape; TensorData: 1; others: 0
	DataSize         uint64   // bytes of its data section; 0 if the descriptor is unreadable
}

// Damaged reports whether the payload's checksum differs from the stored one.
func (b BlobInfo) Damaged() bool { return b.StoredChecksum != b.ComputedChecksum }

// PopefFile is one file of a listing: its path as given, its size (0 if it
// could not be opened) and its listed blobs, in file order.
type PopefFile struct {
	Path  string
	Size  uint64
	Blobs []BlobInfo
}

// PopefListing is what ListPopef found: the files, the first problem (an
// *Error as loading the models would have returned; nil if the files are
// sound and hold the models asked for) and the models loaded (Close them).
type PopefListing struct {
	Files  []PopefFile
	Err    error
	Models []*Model
}

// ListPopef lists the blobs of the PopEF files paths (in order), as
// mrt-info shows them, and if every file's framing is sound loads the
// model named modelName ("" for every model the files hold). Damaged,
// truncated or missing files are not an error of the call: the listing's
// Err says what is wrong and where. InvalidArgument for no paths.
func ListPopef(modelName string, paths ...string) (*PopefListing, error) {
	cPaths := newCArray(paths, false)
	defer cPaths.free()
	cName := optionalCString(modelName)
	defer C.free(unsafe.Pointer(cName))
	var listing *C.mrt_popef_listing
	if err := call(func() C.mrt_status {
		return C.mrt_popef_listing_create(cPaths.array, C.size_t(len(paths)), cName, &listing)
	}); err != nil {
		return nil, err
	}
	defer C.mrt_popef_listing_destroy(listing) // the models outlive it
	result := &PopefListing{}
	var status C.mrt_status
	var message *C.char
	if err := call(func() C.mrt_status { return C.mrt_popef_listing_error(listing, &status, &message) }); err != nil {
		return nil, err
	}
	if status != 0 {
		result.Err = &Error{Code: Code(status), Message: C.GoString(message)}
	}
	for file := range paths {
		listed, err := listFile(listing, file)
		if err != nil {
			return nil, err
		}
		result.Files = append(result.Files, listed)
	}
	var count C.size_t
	if err := call(func() C.mrt_status { return C.mrt_popef_listing_num_models(listing, &count) }); err != nil {
		return nil, err
	}
	for index := 0; index < int(count); index++ {
		var model *C.mrt_model
		if err := call(func() C.mrt_status { return C.mrt_popef_listing_model(listing, C.size_t(index), &model) }); err != nil {
			return nil, err
		}
		result.Models = append(result.Models, newModel(model))
	}
	return result, nil
}

func listFile(listing *C.mrt_popef_listing, file int) (PopefFile, error) {
	var path *C.char
	var size C.uint64_t
	var count C.size_t
	if err := call(func() C.mrt_status {
		return C.mrt_popef_listing_file(listing, C.size_t(file), &path, &size, &count)
	}); err != nil {
		return PopefFile{}, err
	}
	listed := PopefFile{Path: C.GoString(path), Size: uint64(size)}
	for index := 0; index < int(count); index++ {
		var c C.mrt_blob_info
		c.struct_size = C.size_t(unsafe.Sizeof(c))
		if err := call(func() C.mrt_status {
			return C.mrt_popef_listing_blob(listing, C.size_t(file), C.size_t(index), &c)
		}); err != nil {
			return PopefFile{}, err
		}
		listed.Blobs = append(listed.Blobs, BlobInfo{
			File: int(c.file), Index: int(c.index), Type: BlobType(c._type),
			Executable: C.GoString(c.executable), Name: C.GoString(c.name), Offset: uint64(c.offset),
			PayloadSize: uint64(c.payload_size), StoredChecksum: uint64(c.stored_checksum),
			ComputedChecksum: uint64(c.computed_checksum), Problem: C.GoString(c.problem),
			DataType: DataType(c.data_type), Shape: int64s(unsafe.Pointer(c.shape), int(c.rank)),
			NumTensors: uint64(c.num_tensors), DataSize: uint64(c.data_size),
		})
	}
	return listed, nil
}
