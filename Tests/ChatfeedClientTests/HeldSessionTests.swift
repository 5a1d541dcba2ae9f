import ChatfeedClient
import ChatfeedEngine
import Foundation
import Synchronization
import Testing
import TestSupport

/// An in-process client whose session the engine holds (its unread output past
/// `sessionOutputLimitBytes`) while many calls are in flight: its sends wait off the client's
/// actor, so the client's reader goes on reading — which is what releases the session — and
/// every call is answered.
@Suite struct HeldSessionTests {
    @Test func manyCallsInFlightPastTheOutputBoundAreAllAnswered() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: directory.path("held.sqlite"), sessionOutputLimitBytes: 1 << 10))
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = try await ChatClient(transport: InProcessTransport(engine: engine), requestTimeout: nil)
        // Each request and each answer is about 10 KiB: 100 of them are four times the engine's
        // input queue (256 KiB), and one answer is past the output bound.
        let ids = (0..<200).map { "chat-\($0)-" + String(repeating: "x", count: 40) }
        let calls = 100
        let answered = AnsweredCount()
        let work = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<calls {
                    group.addTask {
                        let located = try await client.locateChats(ids)
                        #expect(located.total == 0)
                        answered.add()
                    }
                }
                try await group.waitForAll()
            }
        }
        for _ in 0..<3000 where answered.value < calls {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(answered.value == calls)
        if answered.value < calls { engine.stop() }  // frees a blocked sender: the test ends
        _ = await work.result
        await client.close()
    }
}

private final class AnsweredCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
