@testable import ChatfeedEngine
import Testing

/// The input queue keeps nothing of a session once the engine handled its end: an engine that
/// serves many short sessions (a client per request, reconnects) does not grow.
@Suite struct InputQueueTests {
    @Test func anEndedSessionIsForgottenOnceItsEndIsHandled() {
        let queue = InputQueue()
        let sessions = 1...100
        for id in sessions {
            #expect(queue.push(.opened(SessionRecord(id: id, identity: .trusted, output: DiscardedOutput()))))
            #expect(queue.push(.bytes(session: id, Array("{}\n".utf8))))
            queue.end(id)
        }
        _ = queue.takeAll(waitingAtMost: 0)
        for id in sessions { queue.forget(id) }  // what the engine does as it handles each end
        #expect(queue.keptSessions.isEmpty)
        // An ended session's sender is still refused.
        #expect(!queue.push(.bytes(session: 1, Array("{}\n".utf8))))
        #expect(!queue.push(.endOfInput(session: 1)))
        #expect(queue.keptSessions.isEmpty)
    }
}

private final class DiscardedOutput: EngineOutput {
    func enqueue(_ bytes: [UInt8]) {}
    func flush() -> Bool { true }
    var isPeerGone: Bool { false }
}
