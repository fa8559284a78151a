"""Session: the mlp model run by hand on a device, with anchor callbacks,
handler factories and predicates; their errors and exceptions."""
import gc
import threading
import unittest
import weakref

import numpy as np

import libmrt
from libmrt import CallbackPolicy as Cb, PopefDataUsage as Data, PredicateKind as Kind
from support import MODEL, MrtTestCase, deterministic_image, needs_model, reference_probs, wait_until


@needs_model
class SessionTest(MrtTestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(MODEL)
        cls.manager = libmrt.DeviceManager()
        cls.image = deterministic_image()
        cls.expected = reference_probs(cls.model, cls.image)

    @classmethod
    def tearDownClass(cls):
        cls.manager.close()
        cls.model.close()

    def bound_session(self, **options):
        session = libmrt.Session(self.model, **options)
        with self.manager.get_device_for_model(self.model) as device:
            session.bind(device)  # the session keeps its own reference
        return session

    def test_anchor_callbacks_get_typed_views_of_the_transfer(self):
        probs, shapes = [], []

        def feed(array):
            shapes.append((array.dtype, array.shape, array.flags.writeable))
            array[...] = self.image

        with self.bound_session() as session:
            session.set_callback("image", feed)
            session.set_callback("probs", lambda array: probs.append(array.copy()))
            for _ in range(2):
                session.run_main()
            self.assertEqual(session.anchors_not_connected([1]), [])
            session.check_anchors_connected([0, 1])
        self.assertEqual(shapes[0], (np.dtype(np.float32), (1, 784), True))
        self.assertEqual(len(probs), 2)
        np.testing.assert_allclose(probs[1], self.expected, rtol=1e-5, atol=1e-7)

    def test_anchor_lists_and_unbound_anchors(self):
        with libmrt.Session(self.model) as session:
            self.assertEqual([a.name for a in session.anchors(libmrt.AnchorSet.USER_INPUTS)],
                             ["image"])
            self.assertEqual([a.name for a in session.anchors(libmrt.AnchorSet.USER_OUTPUTS)],
                             ["probs"])
            self.assertEqual(len(session.anchors(libmrt.AnchorSet.INPUTS)), 5)
            unbound = session.anchors_not_connected([1])
            self.assertEqual([(program, a.handle) for program, a in unbound],
                             [(1, "image"), (1, "probs")])
            self.assert_error(libmrt.FailedPreconditionError, "image",
                              lambda: session.check_anchors_connected([1]))
            self.assert_error(libmrt.NotFoundError, "",
                              lambda: session.anchors_not_connected([7]))
            self.assert_error(libmrt.FailedPreconditionError, "",
                              session.run_main)  # not bound to a device
            self.assertEqual(session.model().info().executable, "mlp")

    def test_handler_factories_and_predicates(self):
        seen, outputs = [], []

        def input_factory(anchor):
            seen.append(anchor.handle)
            return lambda array: array.__setitem__(Ellipsis, self.image)

        with self.bound_session() as session:
            only_main = libmrt.AnchorPredicate.prebuilt(
                Kind.ANCHOR_CALLBACK, libmrt.PrebuiltPredicate.PROGRAM_FLOW_MAIN, Cb.BIND_USER_CB,
                Cb.SKIP_CB, model=self.model)
            session.set_input_handler(input_factory, only_main)
            session.set_output_handler(lambda anchor: lambda array: outputs.append(array.copy()))
            only_main.close()  # the session keeps its own reference
            session.run_main()
        self.assertEqual(seen, ["image"])
        np.testing.assert_allclose(outputs[0], self.expected, rtol=1e-5, atol=1e-7)

    def test_predicate_kinds_and_combinations(self):
        main = libmrt.AnchorPredicate.prebuilt(Kind.ANCHOR_CALLBACK,
                                               libmrt.PrebuiltPredicate.PROGRAM_FLOW_MAIN,
                                               Cb.BIND_USER_CB, Cb.SKIP_CB, model=self.model)
        self.assertEqual(main.evaluate(self.model, "image"), Cb.BIND_USER_CB)
        self.assertEqual(main.evaluate(self.model, "w1"), Cb.SKIP_CB)
        by_program = libmrt.AnchorPredicate.program_policies(
            Kind.ANCHOR_CALLBACK, [([0], Cb.BIND_EMPTY_CB), ([1], Cb.BIND_USER_CB)], Cb.SKIP_CB)
        self.assertEqual(by_program.evaluate(self.model, "b1"), Cb.BIND_EMPTY_CB)
        by_handle = libmrt.AnchorPredicate.anchor_policies(Kind.POPEF_DATA_USAGE,
                                                           {"w1": Data.USE_USER_DATA},
                                                           Data.USE_POPEF_DATA_IF_ANY)
        self.assertEqual(by_handle.evaluate(self.model, "w1"), Data.USE_USER_DATA)
        user = libmrt.AnchorPredicate.user(
            Kind.ANCHOR_CALLBACK,
            lambda anchor: Cb.BIND_USER_CB if anchor.shape == (1, 784) else Cb.SKIP_CB)
        self.assertEqual(user.evaluate(self.model, "image"), Cb.BIND_USER_CB)
        both = libmrt.AnchorPredicate.all_of(Kind.ANCHOR_CALLBACK, Cb.BIND_USER_CB, Cb.SKIP_CB,
                                             [main, user])
        either = libmrt.AnchorPredicate.any_of(Kind.ANCHOR_CALLBACK, Cb.BIND_USER_CB, Cb.SKIP_CB,
                                               [main, by_program])
        self.assertEqual(both.evaluate(self.model, "probs"), Cb.SKIP_CB)
        self.assertEqual(either.evaluate(self.model, "probs"), Cb.BIND_USER_CB)
        self.assert_error(libmrt.NotFoundError, "", lambda: main.evaluate(self.model, "nope"))
        self.assert_error(libmrt.InvalidArgumentError, "",
                          lambda: libmrt.AnchorPredicate.prebuilt(Kind.ANCHOR_CALLBACK, 42, 0, 1))
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: libmrt.AnchorPredicate.user(Kind.ANCHOR_CALLBACK, 3))

    def test_popef_data_predicate_lets_the_user_feed_weights(self):
        # w2 from the user (zeros) instead of its TensorData: softmax of b2.
        user_w2 = libmrt.AnchorPredicate.anchor_policies(
            Kind.POPEF_DATA_USAGE, {"w2": Data.USE_USER_DATA}, Data.USE_POPEF_DATA_IF_ANY)
        probs = []
        with self.bound_session(popef_data=user_w2) as session:
            self.assertIn("w2", [a.name for a in session.anchors(libmrt.AnchorSet.USER_INPUTS)])
            session.set_callback("w2", lambda array: array.fill(0))
            session.set_callback("image", lambda array: array.fill(0.5))
            session.set_callback("probs", lambda array: probs.append(array.copy()))
            session.run_main()
        b2 = self.model.tensor_data("b2").astype(np.float64)
        expected = np.exp(b2 - b2.max()) / np.exp(b2 - b2.max()).sum()
        np.testing.assert_allclose(probs[0].ravel(), expected, rtol=1e-5, atol=1e-7)

    def test_exceptions_in_callbacks_are_raised_by_the_run(self):
        with self.bound_session() as session:
            session.set_callback("image", lambda array: 1 / 0)
            session.set_callback("probs", None)  # an empty callback
            with self.assertRaises(ZeroDivisionError):
                session.run_main()
            session.set_callback("image", lambda array: array.fill(0))
            session.run_main()  # usable after the failure
            self.assertRaises(ZeroDivisionError, session.set_input_handler, lambda anchor: 1 / 0)
            failing = libmrt.AnchorPredicate.user(Kind.ANCHOR_CALLBACK, lambda anchor: [][0])
            with self.assertRaises(IndexError) as caught:
                failing.evaluate(self.model, "image")
            self.assertIsInstance(caught.exception.__cause__, libmrt.InvalidArgumentError)
            self.assert_error(libmrt.InvalidArgumentError, "not callable",
                              lambda: session.set_callback("image", "feed"))
            self.assert_error(libmrt.NotFoundError, "", lambda: session.set_callback("nope", print))

    def test_callbacks_are_released_with_the_session(self):
        class Feed:
            def __call__(self, array):
                array.fill(0)

        feed = Feed()
        reference = weakref.ref(feed)
        session = self.bound_session()
        session.set_callback("image", feed)
        del feed
        gc.collect()
        self.assertIsNotNone(reference())  # the session still holds it
        session.close()
        gc.collect()
        self.assertTrue(wait_until(lambda: reference() is None))

    def test_stop_reload_and_simulated_errors(self):
        with self.bound_session() as session:
            session.set_callback("image", lambda array: array.fill(0))
            session.set_callback("probs", None)
            session.run_main()
            self.assertFalse(session.stopped)
            session.stop()
            self.assertTrue(session.stopped)
            self.assert_error(libmrt.FailedPreconditionError, "", session.run_main)
            session.reload()
            session.run_main()
            relu = [step.name for step in self.model.executable().steps()].index("relu")
            session.insert_simulated_error(libmrt.SimulatedError.TILE_EXCEPTION, relu)
            error = self.assert_error(libmrt.DeviceError, "", session.run_main)
            self.assertEqual(error.recovery_action, libmrt.RecoveryAction.IPU_RESET)
            session.erase_simulated_error(relu)
            self.assert_error(libmrt.NotFoundError, "",
                              lambda: session.erase_simulated_error(relu))
            session.clear_simulated_errors()
            session.reload()
            session.run_main()
            session.unload()
            self.assert_error(libmrt.FailedPreconditionError, "", session.unload)

    def test_stop_from_another_thread(self):
        started = threading.Event()

        def slow_feed(array):
            started.set()
            array.fill(0)

        with self.bound_session() as session:
            session.set_callback("image", slow_feed)
            session.set_callback("probs", None)
            threading.Thread(target=lambda: started.wait(10) and session.stop()).start()
            with self.assertRaises(libmrt.MrtError) as caught:
                for _ in range(10000):
                    session.run_main()
            self.assertIn(caught.exception.code, (libmrt.Status.CANCELLED,
                                                  libmrt.Status.FAILED_PRECONDITION))

    def test_immediate_session_from_files(self):
        with libmrt.Session(MODEL, policy=libmrt.LaunchPolicy.IMMEDIATE) as session:
            session.set_callback("image", lambda array: array.fill(0))
            session.set_callback("probs", None)
            session.run_programs([0, 1])
            session.run_load()
            session.run_save()
        self.assert_error(libmrt.NotFoundError, "", lambda: libmrt.Session(MODEL + ".missing"))


if __name__ == "__main__":
    unittest.main()
