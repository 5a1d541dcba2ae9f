import Foundation
import NamedThreads

/// Runs the engine's feed work of one group — applying its changes to the live lists, the
/// batches and their JSON — on a thread of its own while the engine thread writes the next
/// group's statements (docs/DECISIONS.md, "A group's feed work beside the next group's statements").
///
/// One job at a time, handed over and taken back by the engine: `start` gives the thread the
/// job, `wait` returns once it has ended. Between the two the engine touches nothing the job
/// does (it runs the store's statements only), so the job owns the feed, the sessions' output
/// and the content source's reads for that long; the lock taken by both orders their memory.
final class FeedWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var job: (() -> Void)?
    private var running = false
    private var stopped = false
    private var finished = false

    init() {
        // (The engine thread's stack: the job runs the code the engine runs.)
        Thread.start(named: "chatfeed.feed", stackSize: 8 << 20) { [self] in run() }
    }

    /// Starts `job` on the worker's thread (no job may be running: `wait()` took the last one).
    func start(_ job: @escaping () -> Void) {
        condition.lock()
        precondition(!running, "one feed job at a time")
        self.job = job
        running = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the running job, if any, to end.
    func wait() {
        condition.lock()
        while running { condition.wait() }
        condition.unlock()
    }

    /// Ends the thread once its running job has ended.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while job == nil && !stopped { condition.wait() }
            guard let job else {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            self.job = nil
            condition.unlock()
            job()
            condition.lock()
            running = false
            condition.broadcast()
        }
    }
}
