"""list_popef (what mrt-info shows) on the mlp model and variants of it
written here: every blob of a sound file with its descriptor, the model
loaded from one file or split over two, and what is left of damaged,
truncated and missing files with the first problem and where it is; bad
arguments; Model.batching_dim of a model that records none."""
import os
import tempfile
import unittest

import numpy as np

import libmrt
from libmrt import BlobType, Status
from support import MODEL, MrtTestCase, needs_model

HEADER_BYTES = 64  # a blob's header; its payload follows


@needs_model
class PopefListingTest(MrtTestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        with open(MODEL, "rb") as f:
            self.original = f.read()
        self.sound = libmrt.list_popef(MODEL)

    def tearDown(self):
        self.sound.close()
        self.scratch.cleanup()

    def variant(self, name, data):
        path = os.path.join(self.scratch.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def blob_named(self, name):
        return next(blob for blob in self.sound.blobs if blob.name == name)

    def test_a_sound_file_lists_every_blob_and_its_model(self):
        listing = self.sound
        self.assertEqual((listing.status, listing.message, listing.error), (Status.OK, "", None))
        self.assertEqual(len(listing.files), 1)
        file = listing.files[0]
        self.assertEqual((file.path, file.size), (MODEL, len(self.original)))
        self.assertEqual(listing.blobs, file.blobs)
        kinds = [blob.type for blob in file.blobs]
        self.assertEqual(kinds[:2], [BlobType.METADATA, BlobType.EXECUTABLE])
        self.assertEqual(file.blobs[0].offset, 0)
        offsets = [blob.offset for blob in file.blobs]
        self.assertEqual(offsets, sorted(offsets))
        [model] = listing.models
        for index, blob in enumerate(file.blobs):
            self.assertEqual((blob.file, blob.index, blob.executable, blob.problem),
                             (0, index, "mlp", ""))
            self.assertFalse(blob.damaged)
            self.assertGreater(blob.payload_size, blob.data_size)
        tensors = [blob for blob in file.blobs if blob.type == BlobType.TENSOR_DATA]
        self.assertEqual(sorted(blob.name for blob in tensors), ["b1", "b2", "w1", "w2"])
        for blob in tensors:
            data = model.tensor_data(blob.name)
            self.assertEqual((blob.dtype, blob.shape, blob.num_tensors, blob.data_size),
                             (data.dtype, data.shape, 1, data.nbytes))
        self.assertEqual((file.blobs[0].name, file.blobs[0].dtype, file.blobs[0].shape,
                          file.blobs[0].data_size), ("", None, (), 0))
        self.assertEqual(model.info().executable, "mlp")
        self.assertIsNone(model.batching_dim)

    def test_models_outlive_their_listing_and_close_with_it(self):
        with libmrt.list_popef([MODEL]) as listing:
            [model] = listing.models
            weights = model.tensor_data("w1")
        self.assertTrue(model.closed)
        reference = libmrt.Model(MODEL)
        np.testing.assert_array_equal(weights, reference.tensor_data("w1"))  # views stay valid
        reference.close()

    def test_the_model_named_or_none_found(self):
        with libmrt.list_popef(MODEL, model_name="mlp") as listing:
            self.assertEqual([m.info().executable for m in listing.models], ["mlp"])
        with libmrt.list_popef(MODEL, model_name="gamma") as listing:
            self.assertEqual(listing.status, Status.NOT_FOUND)
            self.assertIn("no Metadata for executable 'gamma'", listing.message)
            self.assertIsInstance(listing.error, libmrt.NotFoundError)
            self.assertEqual(listing.models, ())
            self.assertEqual(listing.blobs, self.sound.blobs)  # every blob still listed

    def test_a_model_split_over_files_and_an_incomplete_part(self):
        graph = os.path.join(self.scratch.name, "graph.popef")
        weights = os.path.join(self.scratch.name, "weights.popef")
        self.sound.models[0].write_split(graph, weights)
        with libmrt.list_popef([graph, weights]) as listing:
            self.assertEqual(listing.status, Status.OK)
            self.assertEqual(len(listing.models), 1)
            self.assertEqual([f.path for f in listing.files], [graph, weights])
            data_blobs = listing.files[1].blobs
            self.assertTrue(data_blobs)
            self.assertTrue(all(blob.file == 1 for blob in data_blobs))
            self.assertEqual({blob.name for blob in data_blobs}, {"b1", "b2", "w1", "w2"})
        with libmrt.list_popef(graph) as listing:  # sound framing, no weights
            self.assertEqual(listing.status, Status.CORRUPT_MODEL)
            self.assertIn("blob 0 (Metadata) at byte 0", listing.message)
            self.assertIn("which model 'mlp' does not have", listing.message)
            self.assertEqual(listing.models, ())

    def test_a_damaged_payload_is_listed_with_both_checksums(self):
        w1 = self.blob_named("w1")
        flip = w1.offset + HEADER_BYTES + w1.payload_size - 1  # w1's last data byte
        data = bytearray(self.original)
        data[flip] ^= 0x40
        with libmrt.list_popef(self.variant("damaged.popef", data)) as listing:
            self.assertEqual(listing.status, Status.CORRUPT_MODEL)
            self.assertIn(f"blob {w1.index} (TensorData) at byte {w1.offset}: payload checksum "
                          "mismatch", listing.message)
            self.assertNotIn("\n", listing.message)
            self.assertEqual(listing.models, ())
            damaged = [blob.name for blob in listing.blobs if blob.damaged]
            self.assertEqual(damaged, ["w1"])
            self.assertEqual(listing.blobs[w1.index].stored_checksum, w1.stored_checksum)

    def test_a_damaged_descriptor_says_why_it_is_unreadable(self):
        w1 = self.blob_named("w1")
        data = bytearray(self.original)
        data[w1.offset + HEADER_BYTES] ^= 0x40  # the prefix of its payload
        with libmrt.list_popef(self.variant("descriptor.popef", data)) as listing:
            self.assertEqual(listing.status, Status.CORRUPT_MODEL)
            blob = listing.blobs[w1.index]
            self.assertIn(f"blob {w1.index} (TensorData) at byte {w1.offset}", blob.problem)
            self.assertEqual((blob.executable, blob.name, blob.dtype, blob.data_size),
                             ("", "", None, 0))

    def test_a_truncated_file_lists_the_blobs_before_the_cut(self):
        b2 = self.blob_named("b2")
        keep = b2.offset + HEADER_BYTES + 10
        cut = self.variant("truncated.popef", self.original[:keep])
        with libmrt.list_popef([MODEL, cut]) as listing:
            self.assertEqual(listing.status, Status.CORRUPT_MODEL)
            self.assertIn(f"blob {b2.index} (TensorData) at byte {b2.offset}", listing.message)
            self.assertIn("truncated?", listing.message)
            self.assertEqual(listing.models, ())
            self.assertEqual(len(listing.files[0].blobs), len(self.sound.blobs))
            self.assertEqual(listing.files[1].size, keep)
            self.assertEqual([b.name for b in listing.files[1].blobs],
                             [b.name for b in self.sound.blobs[:b2.index]])

    def test_missing_files_and_directories(self):
        missing = os.path.join(self.scratch.name, "missing.popef")
        with libmrt.list_popef([missing, MODEL]) as listing:
            self.assertEqual(listing.status, Status.NOT_FOUND)
            self.assertIn("missing.popef", listing.message)
            self.assertEqual((listing.files[0].size, listing.files[0].blobs), (0, ()))
            self.assertEqual(len(listing.files[1].blobs), len(self.sound.blobs))
        with libmrt.list_popef(self.scratch.name) as listing:
            self.assertEqual(listing.status, Status.INVALID_ARGUMENT)
            self.assertIn("is a directory, not a PopEF file", listing.message)

    def test_blob_types_are_named_as_popef_spells_them(self):
        names = {BlobType.METADATA: "Metadata", BlobType.EXECUTABLE: "Executable",
                 BlobType.TENSOR_DATA: "TensorData", BlobType.FEED_DATA: "FeedData",
                 BlobType.OPAQUE: "Opaque"}
        self.assertEqual({kind: libmrt.blob_type_name(kind) for kind in BlobType}, names)
        self.assertEqual(libmrt.blob_type_name(3), "TensorData")
        for unknown in (0, 6, -1, 2**31 - 1):
            self.assertEqual(libmrt.blob_type_name(unknown), "Unknown")
        self.assertEqual({libmrt.blob_type_name(blob.type) for blob in self.sound.blobs},
                         {"Metadata", "Executable", "TensorData"})

    def test_bad_arguments(self):
        self.assert_error(libmrt.InvalidArgumentError, "num_paths must be at least 1",
                          lambda: libmrt.list_popef([]))
        self.assert_error(libmrt.InvalidArgumentError, "model_name must not be empty",
                          lambda: libmrt.list_popef(MODEL, model_name=""))


if __name__ == "__main__":
    unittest.main()
