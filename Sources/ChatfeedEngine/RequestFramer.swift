import ChatModel
import WireProtocol

/// A request line of a session, framed and decoded on the thread that sent it
/// (`EngineSession.send`): the engine thread, which every session's requests go through, only
/// handles it. Decoding was a tenth of the engine thread's time in a saturated ingest
/// (Benchmarks/Results/daemon.md, 2026-12-06 19:06–20:00).
enum FramedRequest: Sendable {
    /// A request, and its command as the sender decoded it.
    case request(RPCRequest, PreparedCommand)
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

/// What the sender decodes of a request beyond its line, so that the engine thread only checks
/// it (the command was 4–5% of that thread in a saturated ingest: Benchmarks/Results/daemon.md,
/// 2026-12-07 03:28): the user the request names, and its command decoded for the user the
/// session then acts as. Whether the session may act as that user, and whether the user exists,
/// the engine decides (`Engine.actingUser`).
struct PreparedCommand: Sendable {
    /// `WireCommand.requestedUser(method:params:)`.
    var requestedUser: Result<String?, RPCError>
    /// The user the command was decoded for: the session's own user, or a trusted session's
    /// requested user (its `defaultUser` when it names none).
    var user: String
    /// The command (before `granted(to:)`), or why it could not be decoded. When it could, the
    /// request's params were dropped (the engine needs them no more, and need not free them).
    var command: Result<WireCommand, RPCError>
}

/// A session's framing: the line a send left unfinished, and the decoding of every line.
struct RequestFramer: Sendable {
    private var framer: LineFramer
    /// The user a user session acts as (nil: a trusted session).
    private let boundUser: String?
    /// The user a trusted session's request acts as when it names none.
    private let defaultUser: String

    init(maxLineBytes: Int, identity: SessionIdentity, defaultUser: String) {
        framer = LineFramer(maxLineBytes: maxLineBytes)
        boundUser = identity.boundUser
        self.defaultUser = defaultUser
    }

    /// Frames and decodes `bytes`, which may begin or end in the middle of a line.
    mutating func feed(_ bytes: ArraySlice<UInt8>) -> SessionInput {
        var requests: [FramedRequest] = []
        let (boundUser, defaultUser) = (boundUser, defaultUser)
        bytes.withUnsafeBytes { chunk in
            framer.feed(chunk) { requests.append(Self.decode($0, boundUser: boundUser, defaultUser: defaultUser)) }
        }
        return SessionInput(requests: requests, byteCount: bytes.count)
    }

    /// Ends the input: the last line when it had no `\n`; nil when there is none.
    mutating func finish() -> SessionInput? {
        var requests: [FramedRequest] = []
        let (boundUser, defaultUser) = (boundUser, defaultUser)
        framer.finish { requests.append(Self.decode($0, boundUser: boundUser, defaultUser: defaultUser)) }
        return requests.isEmpty ? nil : SessionInput(requests: requests, byteCount: 0)
    }

    private static func decode(_ event: LineFramer.Event, boundUser: String?, defaultUser: String) -> FramedRequest {
        switch event {
        case .line(let line):
            do {
                var request = try RPCRequest.decode(line: line)
                return .request(request, prepare(&request, boundUser: boundUser, defaultUser: defaultUser))
            } catch {
                return .invalid(error)
            }
        case .tooLong(let prefix):
            return .tooLong(prefix: Array(prefix))
        }
    }

    /// `request`'s command for the user the session acts as (now: the default time of writes).
    private static func prepare(_ request: inout RPCRequest, boundUser: String?, defaultUser: String) -> PreparedCommand {
        let requested = Result { () throws(RPCError) in
            try WireCommand.requestedUser(method: request.wireMethod, params: request.params)
        }
        let user = boundUser ?? (try? requested.get()).flatMap { $0 } ?? defaultUser
        // A user session's post names its sender or is its user's (a trusted one names it).
        let command = Result { () throws(RPCError) in
            try WireCommand(request, now: currentMilliseconds(), user: user, defaultSender: boundUser)
        }
        if case .success = command { request.params = nil }
        return PreparedCommand(requestedUser: requested, user: user, command: command)
    }
}
