package mrt_test

// ListPopef (what mrt-info shows) on the mlp model and variants of it
// written here: every blob of a sound file, the model named or not found,
// a damaged payload with both checksums, a missing file, bad arguments.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

const blobHeaderBytes = 64 // a blob's header; its payload follows

func listPopef(t *testing.T, modelName string, paths ...string) *mrt.PopefListing {
	t.Helper()
	listing, err := mrt.ListPopef(modelName, paths...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, model := range listing.Models {
			model.Close()
		}
	})
	return listing
}

func blobNamed(t *testing.T, listing *mrt.PopefListing, name string) mrt.BlobInfo {
	t.Helper()
	for _, blob := range listing.Files[0].Blobs {
		if blob.Name == name {
			return blob
		}
	}
	t.Fatalf("no blob %q", name)
	return mrt.BlobInfo{}
}

func TestASoundFileListsEveryBlobAndItsModel(t *testing.T) {
	path := os.Getenv("MRT_TEST_MODEL")
	listing := listPopef(t, "", path)
	stat, _ := os.Stat(path)
	if listing.Err != nil || len(listing.Files) != 1 || listing.Files[0].Path != path ||
		listing.Files[0].Size != uint64(stat.Size()) || len(listing.Models) != 1 {
		t.Fatalf("listing %+v", listing)
	}
	blobs := listing.Files[0].Blobs
	if blobs[0].Type != mrt.BlobMetadata || blobs[0].Offset != 0 || blobs[1].Type != mrt.BlobExecutable {
		t.Fatalf("first blobs %+v", blobs[:2])
	}
	for i, blob := range blobs {
		if blob.File != 0 || blob.Index != i || blob.Executable != "mlp" || blob.Problem != "" || blob.Damaged() {
			t.Fatalf("blob %d: %+v", i, blob)
		}
	}
	w1 := blobNamed(t, listing, "w1")
	if w1.Type != mrt.BlobTensorData || w1.DataType != mrt.F32 || fmt.Sprint(w1.Shape) != "[784 128]" ||
		w1.NumTensors != 1 || w1.DataSize != 784*128*4 {
		t.Fatalf("w1 %+v", w1)
	}
	if info, err := listing.Models[0].Info(); err != nil || info.Executable != "mlp" {
		t.Fatalf("model %+v, %v", info, err)
	}

	gamma := listPopef(t, "gamma", path)
	wantError(t, gamma.Err, mrt.NotFound, "no Metadata for executable 'gamma'")
	if len(gamma.Models) != 0 || len(gamma.Files[0].Blobs) != len(blobs) {
		t.Fatalf("listing for gamma %+v", gamma)
	}
}

func TestDamagedAndMissingFilesAreListedWithTheProblem(t *testing.T) {
	path := os.Getenv("MRT_TEST_MODEL")
	w1 := blobNamed(t, listPopef(t, "", path), "w1")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[w1.Offset+blobHeaderBytes+w1.PayloadSize-1] ^= 0x40 // w1's last data byte
	damaged := filepath.Join(t.TempDir(), "damaged.popef")
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	listing := listPopef(t, "", damaged)
	wantError(t, listing.Err, mrt.CorruptModel,
		fmt.Sprintf("blob %d (TensorData) at byte %d: payload checksum mismatch", w1.Index, w1.Offset))
	var mrtErr *mrt.Error
	if !errors.As(listing.Err, &mrtErr) || !errors.Is(listing.Err, mrt.CorruptModel) || len(listing.Models) != 0 {
		t.Fatalf("listing %+v", listing)
	}
	for _, blob := range listing.Files[0].Blobs {
		if blob.Damaged() != (blob.Name == "w1") {
			t.Fatalf("blob %+v", blob)
		}
	}

	missing := filepath.Join(t.TempDir(), "missing.popef")
	listing = listPopef(t, "", missing, path)
	wantError(t, listing.Err, mrt.NotFound, "missing.popef")
	if listing.Files[0].Size != 0 || len(listing.Files[0].Blobs) != 0 || len(listing.Files[1].Blobs) == 0 {
		t.Fatalf("listing %+v", listing)
	}

	_, err = mrt.ListPopef("")
	wantError(t, err, mrt.InvalidArgument, "num_paths must be at least 1")
}

func TestBlobTypesAreNamedAsPopefSpellsThem(t *testing.T) {
	names := map[mrt.BlobType]string{
		mrt.BlobMetadata: "Metadata", mrt.BlobExecutable: "Executable", mrt.BlobTensorData: "TensorData",
		mrt.BlobFeedData: "FeedData", mrt.BlobOpaque: "Opaque",
		0: "Unknown", 6: "Unknown", -1: "Unknown",
	}
	for kind, name := range names {
		if got := kind.String(); got != name {
			t.Errorf("BlobType(%d).String() = %q, want %q", int32(kind), got, name)
		}
	}
	if got := fmt.Sprint(mrt.BlobTensorData); got != "TensorData" {
		t.Errorf("fmt.Sprint(BlobTensorData) = %q", got)
	}
}
