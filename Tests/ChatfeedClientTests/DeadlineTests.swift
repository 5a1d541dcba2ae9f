import Dispatch
import Testing
import TestSupport

/// `withDeadline` (TestSupport), which the gateway's long mirror test relies on to fail rather
/// than hang.
@Suite struct DeadlineTests {
    /// A wait that does not end on cancellation (as `Task.value` of a server that never stops)
    /// fails at the deadline: the test goes on without waiting for it. (Its resume comes after
    /// an hour, long after the run; waited for, the wait would succeed instead of throwing. In a
    /// whole run the deadline's timer waits for a thread of the busy cooperative pool: 41 s
    /// measured, so no bound on the time.)
    @Test func aWaitThatIgnoresCancellationFailsAtItsDeadline() async throws {
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(200), "a wait for a late resume") {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 3600) { continuation.resume() }
                }
            }
        }
    }

    @Test func aResultAndAnErrorWithinTheDeadlineComeThrough() async throws {
        #expect(try await withDeadline(.seconds(60), "a quick result") { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(60), "a quick failure") { () async throws -> Int in throw Refused() }
        }
    }
}
