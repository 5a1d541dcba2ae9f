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
