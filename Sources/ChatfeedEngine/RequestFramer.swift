import WireProtocol

/// A request line of a session, framed and decoded on the thread that sent it
/// (`EngineSession.send`): the engine thread, which every session's requests go through, only
/// handles it. Decoding was a tenth of the engine thread's time in a saturated ingest
/// (Benchmarks/Results/daemon.md, 2026-12-06 19:06–20:00).
enum FramedRequest: Sendable {
    case request(RPCRequest)
    /// A line that is not a valid request (bad JSON, not a JSON-RPC request): its error.
    case invalid(RPCRequestError)
    /// A line over the limit: its first bytes (up to `LineFramer.tooLongPrefixBytes`), to read
    /// its id from.
    case tooLong(prefix: [UInt8])
}

/// What one piece of a session's bytes brought: the requests its lines completed (none when it
/// completed no line), and its size, which the session's input queue counts.
struct SessionInput: Sendable {
    var requests: [FramedRequest]
    var byteCount: Int
}

/// A session's framing: the line a send left unfinished, and the decoding of every line.
struct RequestFramer: Sendable {
    private var framer: LineFramer

    init(maxLineBytes: Int) {
        framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    /// Frames and decodes `bytes`, which may begin or end in the middle of a line.
    mutating func feed(_ bytes: ArraySlice<UInt8>) -> SessionInput {
        var requests: [FramedRequest] = []
        bytes.withUnsafeBytes { chunk in framer.feed(chunk) { requests.append(Self.decode($0)) } }
        return SessionInput(requests: requests, byteCount: bytes.count)
    }

    /// Ends the input: the last line when it had no `\n`; nil when there is none.
    mutating func finish() -> SessionInput? {
        var requests: [FramedRequest] = []
        framer.finish { requests.append(Self.decode($0)) }
        return requests.isEmpty ? nil : SessionInput(requests: requests, byteCount: 0)
    }

    private static func decode(_ event: LineFramer.Event) -> FramedRequest {
        switch event {
        case .line(let line):
            do {
                return .request(try RPCRequest.decode(line: line))
            } catch {
                return .invalid(error)
            }
        case .tooLong(let prefix):
            return .tooLong(prefix: Array(prefix))
        }
    }
}
