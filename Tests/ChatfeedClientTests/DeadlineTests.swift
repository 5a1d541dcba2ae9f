import Dispatch
import Testing
import TestSupport

/// `withDeadline` (TestSupport), which the gateway's long mirror test relies on to fail rather
/// than hang.
@Suite struct DeadlineTests {
    /// A wait that does not end on cancellation (as `Task.value` of a server that never stops)
    /// fails at the deadline: the test goes on without waiting for it.
    @Test func aWaitThatIgnoresCancellationFailsAtItsDeadline() async throws {
        let started = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(200), "a wait for a late resume") {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 30) { continuation.resume() }
                }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func aResultAndAnErrorWithinTheDeadlineComeThrough() async throws {
        #expect(try await withDeadline(.seconds(60), "a quick result") { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(60), "a quick failure") { () async throws -> Int in throw Refused() }
        }
    }
}
