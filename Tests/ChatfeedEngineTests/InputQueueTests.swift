@testable import ChatfeedEngine
import WireProtocol
import Foundation
import Testing

/// The input queue keeps nothing of a session once the engine handled its end: an engine that
/// serves many short sessions (a client per request, reconnects) does not grow.
@Suite struct InputQueueTests {
    @Test func anEndedSessionIsForgottenOnceItsEndIsHandled() {
        let queue = InputQueue()
        let sessions = 1...100
        for id in sessions {
            #expect(queue.push(.opened(SessionRecord(id: id, identity: .trusted, output: DiscardedOutput()))))
            #expect(queue.push(.input(session: id, Self.line)))
            queue.end(id)
        }
        _ = queue.takeAll(waitingAtMost: 0)
        for id in sessions { queue.forget(id) }  // what the engine does as it handles each end
        #expect(queue.keptSessions.isEmpty)
        // An ended session's sender is still refused.
        #expect(!queue.push(.input(session: 1, Self.line)))
        #expect(!queue.push(.endOfInput(session: 1)))
        #expect(queue.keptSessions.isEmpty)
    }

    /// A request line's input (`{}` and its newline: an invalid request).
    static let line = SessionInput(requests: [.invalid(RPCRequestError(id: nil, error: .init(code: .invalidRequest, message: "")))], byteCount: 3)

    /// A send of many megabytes at once is queued in pieces, each waiting for room: the engine
    /// takes at most about the capacity of it at a time, so another session's ack queued
    /// meanwhile is taken after that much, not after the whole send.
    @Test(.hangGuard) func aLargeSendIsQueuedInPiecesSoThatOtherSessionsWaitBehindOnlyTheCapacity() async throws {
        let capacity = 256 << 10
        let queue = InputQueue(capacityBytes: capacity)
        #expect(queue.push(.opened(SessionRecord(id: 1, identity: .trusted, output: DiscardedOutput()))))
        #expect(queue.push(.opened(SessionRecord(id: 2, identity: .trusted, output: DiscardedOutput()))))
        _ = queue.takeAll(waitingAtMost: 1)  // the openings, before any byte of the large send
        let large = [UInt8](repeating: 0x20, count: 4 << 20)
        let session = EngineSession(id: 1, identity: .trusted, queue: queue, maxLineBytes: LineFramer.defaultMaxLineBytes)
        let sent = Thread { session.send(large) }
        sent.start()
        var taken = 0
        var rounds = 0
        var ackTakenAfter: Int?
        // Bytes lost or never sent end the loop after 30 idle rounds (30 s): a failure, not a hang.
        var idleRounds = 0
        while taken < large.count, idleRounds < 30 {
            if rounds == 1 { #expect(queue.push(.input(session: 2, Self.line))) }
            let round = queue.takeAll(waitingAtMost: 1)
            rounds += 1
            idleRounds = round.isEmpty ? idleRounds + 1 : 0
            var bytes = 0
            for input in round {
                guard case .input(let session, let piece) = input else { continue }
                if session == 1 {
                    bytes += piece.byteCount
                } else if ackTakenAfter == nil {
                    ackTakenAfter = taken + bytes
                }
            }
            #expect(bytes <= capacity + InputQueue.pieceBytes, "round \(rounds) took \(bytes) bytes of the large send")
            taken += bytes
        }
        #expect(taken == large.count)
        #expect(rounds > 4)
        let after = try #require(ackTakenAfter)
        #expect(after <= 3 * (capacity + InputQueue.pieceBytes), "the ack was taken after \(after) bytes of the large send")
    }
}

/// An output that drops every line: for tests of the input side alone.
final class DiscardedOutput: EngineOutput {
    func enqueue(_ bytes: [UInt8]) {}
    func flush() -> Bool { true }
    var isPeerGone: Bool { false }
}
