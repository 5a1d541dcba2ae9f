@testable import ChatfeedEngine
import JSONCodec
import Testing
import WireProtocol

/// A session's sender frames and decodes its lines (`EngineSession`): what reaches the engine
/// thread is requests, in the order of the bytes, however the bytes were split.
@Suite struct SessionFramingTests {
    static func request(_ id: Int, _ method: String = "server.version") -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)"}"#
    }

    /// The queue's items of session 1, as (requests, bytes) per item, and whether its end came.
    static func taken(from queue: InputQueue) -> (requests: [FramedRequest], bytes: Int, ended: Bool) {
        var requests: [FramedRequest] = []
        var bytes = 0
        var ended = false
        for input in queue.takeAll(waitingAtMost: 0) {
            switch input {
            case .input(1, let input):
                requests += input.requests
                bytes += input.byteCount
            case .endOfInput(1): ended = true
            default: break
            }
        }
        return (requests, bytes, ended)
    }

    static func ids(_ requests: [FramedRequest]) -> [String] {
        requests.map {
            switch $0 {
            case .request(let request, _): "\(request.id.map { "\($0)" } ?? "-")"
            case .invalid: "invalid"
            case .tooLong: "tooLong"
            }
        }
    }

    static func open(capacity: Int = 256 << 10, maxLineBytes: Int = 1 << 20) -> (InputQueue, EngineSession) {
        let queue = InputQueue(capacityBytes: capacity)
        _ = queue.push(.opened(SessionRecord(id: 1, identity: .trusted, output: DiscardedOutput())))
        _ = queue.takeAll(waitingAtMost: 0)
        return (queue, EngineSession(id: 1, identity: .trusted, queue: queue, maxLineBytes: maxLineBytes))
    }

    /// Every split of two requests, a bad line, a blank line and a too-long line into two sends
    /// gives the same requests, and counts every byte.
    @Test func anySplitOfTheBytesGivesTheSameRequests() {
        let text = Self.request(1) + "\n{oops\n  \n" + Self.request(2) + "\r\n" + String(repeating: "x", count: 300) + "\n"
        let bytes = Array(text.utf8)
        for cut in 0...bytes.count {
            let (queue, session) = Self.open(maxLineBytes: 200)
            #expect(session.send(Array(bytes[..<cut])))
            #expect(session.send(Array(bytes[cut...])))
            let (requests, count, _) = Self.taken(from: queue)
            #expect(Self.ids(requests) == ["1", "invalid", "2", "tooLong"], "cut at \(cut)")
            #expect(count == bytes.count)
        }
    }

    /// A `trySend` refused because the queue is full takes nothing: offered again, a line it
    /// ends is whole (its framing was undone).
    @Test func aRefusedTrySendIsOfferedAgainWhole() {
        let (queue, session) = Self.open(capacity: 8)
        let line = Array((Self.request(7) + "\n").utf8)
        let head = Array(line[..<20]), tail = Array(line[20...])
        guard case .sent = session.trySend(head, whenRoom: {}) else { Issue.record("the first piece was refused"); return }
        guard case .full = session.trySend(tail, whenRoom: {}) else { Issue.record("20 bytes queued of 8 did not fill it"); return }
        #expect(Self.ids(Self.taken(from: queue).requests) == [])
        guard case .sent = session.trySend(tail, whenRoom: {}) else { Issue.record("offered again, it was refused"); return }
        #expect(Self.ids(Self.taken(from: queue).requests) == ["7"])
    }

    /// The end of a session's input delivers a last line without its `\n`, before the end.
    @Test func closingDeliversALastLineWithoutItsNewline() {
        let (queue, session) = Self.open()
        #expect(session.send(Array((Self.request(1) + "\n" + Self.request(2)).utf8)))
        session.close()
        let taken = Self.taken(from: queue)
        #expect(Self.ids(taken.requests) == ["1", "2"])
        #expect(taken.ended)
        #expect(!session.send(Array("\n".utf8)))  // ended: refused
    }
}
