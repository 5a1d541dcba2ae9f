import Foundation
import Synchronization

/// Every thread of the cooperative pool kept busy, as the synchronous tests of a whole run keep
/// them: a test shows with it that something answers without the pool (it runs its own tasks on
/// `DedicatedExecutor`). The threads are given back by `release()`, or after a time limit at
/// the latest, so that a failing test cannot stop the run.
public final class CooperativePoolOccupation: Sendable {
    private let threads: Int
    private let held = DispatchSemaphore(value: 0)
    private let released = Atomic(false)

    private init(threads: Int) { self.threads = threads }

    /// Occupies `threads` threads of the pool (by default one per active core: the pool's width
    /// on Linux) and returns once all of them are held; gives them back after `limit` at the latest.
    public static func occupy(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount, limit: TimeInterval = 20
    ) async -> CooperativePoolOccupation {
        let occupation = CooperativePoolOccupation(threads: threads)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            Task.detached { [held = occupation.held] in
                started.signal()
                held.wait()
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { _ = occupation.release() }
        // Waited for on a thread of its own: the caller's may be one of the pool's.
        await offPool { for _ in 0..<threads { started.wait() } }
        return occupation
    }

    /// Gives the threads back. Returns false when they were given back already (the time limit
    /// passed first).
    @discardableResult
    public func release() -> Bool {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        for _ in 0..<threads { held.signal() }
        return true
    }
}
