@testable import ChatfeedEngine
import Foundation
import Testing
import TestSupport

/// `LineOutput` between the engine thread and a reader's task.
@Suite struct LineOutputTests {
    /// The engine finishing a session's output while the reader's task is cancelled: each side
    /// takes the other's lock (the buffer's, the task's status), so a resume under the buffer's
    /// lock deadlocked the engine thread, and a listening daemon never exited (seen once in
    /// thousands of WebSocket connections). Many races on two threads, bounded in time.
    @Test(.hangGuard) func finishingWhileTheReaderIsCancelledNeverDeadlocks() async throws {
        let rounds = 20_000
        let done = DispatchSemaphore(value: 0)
        Thread {
            let group = DispatchGroup()
            for _ in 0..<rounds {
                let output = LineOutput(limitBytes: 1 << 20)
                let started = DispatchSemaphore(value: 0)
                group.enter()
                let reader = Task.detached {
                    started.signal()
                    for await _ in output.lines {}
                    group.leave()
                }
                started.wait()
                output.enqueue(Array("line\n".utf8))
                output.flush()
                // The reader is cancelled while the engine's side finishes the output.
                DispatchQueue.global().async { reader.cancel() }
                output.finish()
            }
            group.wait()
            done.signal()
        }.start()
        let finished = await withCheckedContinuation { (result: CheckedContinuation<Bool, Never>) in
            Thread { result.resume(returning: done.wait(timeout: .now() + 120) == .success) }.start()
        }
        #expect(finished, "a finish and a cancellation deadlocked")
    }
}
