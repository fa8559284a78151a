// mrt::detail::useBatchScheduling: puts the calling thread under Linux's
// SCHED_BATCH policy (issue 14, "no collapse under oversubscription").
//
// Why, for a thread that serves others (a replica's device thread): under
// SCHED_NORMAL a woken thread preempts the thread that woke it at once when
// both share a CPU, so a client that submits a request hands the CPU to the
// device thread at every request, and back: two context switches per
// request, each costing more than a small model's whole run. A SCHED_BATCH
// thread never preempts its waker (its preemption is driven by the tick),
// so the client goes on: it queues several requests that one switch then
// carries, or, waiting for its request while the device thread has not run
// yet, serves the device itself (caller-runs). On CPUs of its own a woken
// thread runs at once whatever its policy, so nothing is lost there; its
// time slices and fairness are those of SCHED_NORMAL at the same nice
// value. Threads it creates afterwards inherit the policy.
#pragma once

namespace mrt::detail {

// True if the policy was set. A refusal (a seccomp profile, a kernel
// without it) is logged once per process and otherwise ignored: the thread
// keeps its policy, and only speed differs. A thread that was set once
// (a reused device thread, common/reused_thread.hpp) makes no second call.
bool useBatchScheduling() noexcept;

}  // namespace mrt::detail
