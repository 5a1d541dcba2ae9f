import Foundation
import NamedThreads

/// A thread of the engine's own that runs one job at a time, handed over and taken back by the
/// engine thread: `start` gives it the job, `poll` or `wait` finds it ended. What the job writes
/// before it ends, the engine reads after either (the lock both take orders their memory).
/// Used for a group's sync (`LogSyncer`) and a group's feed work (`Engine.feedWorker`).
final class WorkerThread: @unchecked Sendable {
    private enum State { case idle, running, ended }
    private let condition = NSCondition()
    private var job: (() -> Void)?
    private var state = State.idle
    private var stopped = false
    private var finished = false
    /// Called on the worker's thread after each job has ended (outside the lock).
    private let whenDone: (@Sendable () -> Void)?

    init(named name: String, stackSize: Int? = nil, whenDone: (@Sendable () -> Void)? = nil) {
        self.whenDone = whenDone
        Thread.start(named: name, stackSize: stackSize) { [self] in run() }
    }

    /// Starts `job` on the worker's thread (none may be running or ended untaken: `poll` or
    /// `wait` took the last one).
    func start(_ job: @escaping () -> Void) {
        condition.lock()
        precondition(state == .idle, "one job at a time")
        self.job = job
        state = .running
        condition.broadcast()
        condition.unlock()
    }

    /// True once the job started last has ended, which it takes (none runs then); false while
    /// it runs, or when none was started.
    func poll() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard state == .ended else { return false }
        state = .idle
        return true
    }

    /// Waits for the job started last, if any, to end, and takes it.
    func wait() {
        condition.lock()
        defer { condition.unlock() }
        while state == .running { condition.wait() }
        state = .idle
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
            state = .ended
            condition.broadcast()
            if let whenDone {
                condition.unlock()
                whenDone()
                condition.lock()
            }
        }
    }
}
