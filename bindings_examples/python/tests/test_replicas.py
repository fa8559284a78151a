"""In-model replication: the replicated model (add_one compiled with
replication factor 2) served per replica by a Session - a queue manager and
a thread running Main for each replica, callbacks bound per replica,
handler factories told the replica - and by a ModelRunner; and the errors
naming a bad replica."""
import threading
import unittest

import numpy as np

import libmrt
from support import MODEL, REPLICATED_MODEL, MrtTestCase, needs_model, needs_replicated_model

REPLICAS, N = 2, 16


def replica_input(replica, request):
    """Distinct for every (replica, request)."""
    return (1000 * replica + 20 * request + np.arange(N, dtype=np.float32)).reshape(1, N)


@needs_replicated_model
class ReplicatedSessionTest(MrtTestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(REPLICATED_MODEL)
        cls.devices = libmrt.DeviceManager()

    @classmethod
    def tearDownClass(cls):
        cls.devices.close()
        cls.model.close()

    def bound_session(self):
        session = libmrt.Session(self.model)
        with self.devices.get_device_for_model(self.model) as device:
            session.bind(device)
        return session

    def test_a_queue_manager_and_a_thread_per_replica(self):
        requests = 20
        with self.bound_session() as session:
            self.assertEqual(session.num_replicas, REPLICAS)
            managers = [session.create_queue_manager(replica) for replica in range(REPLICAS)]
            outputs = [[np.full((1, N), -1.0, np.float32) for _ in range(requests)]
                       for _ in range(REPLICAS)]
            failures = []

            def serve(replica):
                try:
                    for _ in range(requests):
                        session.run_main(replica)
                except libmrt.MrtError as error:
                    failures.append(error)

            threads = [threading.Thread(target=serve, args=(r,)) for r in range(REPLICAS)]
            for thread in threads:
                thread.start()
            # This thread is every queue's one producer.
            for request in range(requests):
                for replica in range(REPLICAS):
                    managers[replica].input("x").enqueue(replica_input(replica, request))
                    managers[replica].output("y").enqueue(outputs[replica][request])
            for thread in threads:
                thread.join()
            self.assertEqual(failures, [])
            for replica in range(REPLICAS):
                for request in range(requests):
                    np.testing.assert_array_equal(outputs[replica][request],
                                                  replica_input(replica, request) + 1)
            for manager in managers:
                manager.close()

    def test_callbacks_and_factories_per_replica(self):
        with self.bound_session() as session:
            results = {}
            for replica in range(REPLICAS):
                session.set_callback("x", lambda a, r=replica: a.__setitem__(..., replica_input(r, 0)),
                                     replica)
                session.set_callback("y", lambda a, r=replica: results.__setitem__(r, a.copy()),
                                     replica)
            session.run_main()  # every replica together, each on its own thread
            for replica in range(REPLICAS):
                np.testing.assert_array_equal(results[replica], replica_input(replica, 0) + 1)

            asked = []

            def factory(anchor):
                asked.append((anchor.handle, anchor.replica))
                return lambda a: a.__setitem__(..., replica_input(anchor.replica, 5))

            session.set_input_handler(factory)
            self.assertEqual(asked, [("x", 0), ("x", 1)])
            for replica in range(REPLICAS):
                session.run_main(replica)
                np.testing.assert_array_equal(results[replica], replica_input(replica, 5) + 1)

    def test_a_bad_replica_is_named(self):
        with self.bound_session() as session:
            self.assert_error(libmrt.InvalidArgumentError, "replica 2 out of range",
                              lambda: session.run_main(2))
            self.assert_error(libmrt.InvalidArgumentError, "replica 2 out of range",
                              lambda: session.set_callback("x", lambda a: None, 2))
            self.assert_error(libmrt.InvalidArgumentError,
                              "replica 2 out of range: the session's model 'replicated' has 2",
                              lambda: session.create_queue_manager(2))
            self.assert_error(libmrt.InvalidArgumentError, "each with its own queues",
                              session.create_queue_manager)
            session.stop()
            self.assert_error(libmrt.FailedPreconditionError, "", lambda: session.run_main(0))
            session.reload()
            with session.create_queue_manager(1):
                pass  # closed: replica 1's runs get zeros instead of waiting
            session.run_main(1)
        with libmrt.Session(self.model) as unbound:
            self.assert_error(libmrt.FailedPreconditionError, "not bound to a device",
                              lambda: unbound.run_main(0))

    def test_a_runner_serves_every_replica(self):
        with libmrt.ModelRunner(self.model) as runner:
            self.assertEqual(runner.num_replicas, REPLICAS)
            for replica in range(REPLICAS):
                y = runner.execute({"x": replica_input(replica, 3)}, replica=replica)["y"]
                np.testing.assert_array_equal(y, replica_input(replica, 3) + 1)
            self.assert_error(libmrt.InvalidArgumentError, "2",
                              lambda: runner.execute({"x": replica_input(0, 0)}, replica=2))


@needs_model
class NotReplicatedTest(MrtTestCase):
    def test_a_model_that_is_not_replicated_has_replica_zero(self):
        with libmrt.Model(MODEL) as model, libmrt.Session(model) as session:
            self.assertEqual(session.num_replicas, 1)
            with session.create_queue_manager(0) as manager:
                self.assertEqual(manager.input_names(), ["image"])
            self.assert_error(libmrt.InvalidArgumentError, "has 1 replica",
                              lambda: session.create_queue_manager(1))
            self.assertEqual(model.anchor("image").replica, 0)


if __name__ == "__main__":
    unittest.main()
