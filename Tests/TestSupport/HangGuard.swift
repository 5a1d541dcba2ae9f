import Synchronization
import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that waits on sockets, child processes or other tasks: it catches
    /// a hang, not slowness. It records the hang and cancels the test, but a wait that does not
    /// end on cancellation (a blocking call, a loop that never looks) still holds the whole run:
    /// every such wait needs a deadline of its own, and CI's watchdog (`.ci/swift-test-watched`)
    /// names what it was. In a whole `swift test` run the synchronous tests keep the
    /// cooperative pool's threads (two on a 2-core machine) busy, and an asynchronous test waits
    /// for a free thread at each suspension: one that takes 0.3 s alone takes as long as the whole
    /// run (1–3 minutes measured), so a limit of a minute failed CI although nothing hung.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}

/// A wait that took longer than its deadline (see `withDeadline`).
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "\(what) did not finish within \(limit)" }
}

/// Runs `operation` and throws `DeadlineExceeded` when it has not finished after `limit`: the
/// deadline of its own that a wait needs under `.hangGuard`. Unlike a time limit it does not wait
/// for the operation to end: it cancels it and throws at once, so that a wait that does not end
/// on cancellation (`Task.value` of a server's run, a graceful shutdown that waits for a peer)
/// fails the test instead of holding the run. The operation runs as a task of its own, which
/// inherits the test's task-locals (its issues are the test's).
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let work = Task { try await operation() }
    let race = DeadlineRace<T>()
    defer { race.timer?.cancel() }
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        Task { race.finish(await work.result) }
        race.timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            work.cancel()
            race.finish(.failure(DeadlineExceeded(what: what, limit: limit)))
        }
    }
}

/// The waiter of `withDeadline`: the first of the work and the timer to finish resumes it.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let state = Mutex<(waiter: CheckedContinuation<T, any Error>?, timer: Task<Void, Never>?)>((nil, nil))

    var timer: Task<Void, Never>? {
        get { state.withLock { $0.timer } }
        set { state.withLock { $0.timer = newValue } }
    }

    func start(_ waiter: CheckedContinuation<T, any Error>) { state.withLock { $0.waiter = waiter } }

    func finish(_ result: Result<T, any Error>) {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }
}
