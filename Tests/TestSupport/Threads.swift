import Foundation

/// Runs `body(index)` on `count` threads at once and waits for all of them.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            body(index)
            done.leave()
        }
        thread.start()
    }
    done.wait()
}

/// Runs `body` on a thread of its own and returns its result: a blocking wait (a child process,
/// a semaphore, an engine's stop) that keeps the caller's thread of the cooperative pool free.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { done in
        Thread { done.resume(with: Result { try body() }) }.start()
    }
}

/// `offPool` for a body that cannot fail.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { done in
        Thread { done.resume(returning: body()) }.start()
    }
}
