import JSONCodec
import ListDiff
import WireProtocol

/// An error the engine answered to a request: its JSON-RPC code and message, and for invalid
/// params the field the message names (docs/PROTOCOL.md).
public struct ChatfeedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A JSON-RPC error code, with a name for each code of docs/PROTOCOL.md (`.notFound`,
    /// `.storageFull`, `.readOnly`, `.forbidden`…): the wire layer's one list of codes.
    public typealias Code = RPCErrorCode

    public var code: Code
    public var message: String
    /// The parameter that was invalid (for `.invalidParams`), e.g. `"title"` or `"chats[2]"`.
    public var field: String?
    /// The error's `data` member as the engine sent it.
    public var data: JSONValue?
    /// The method of the request that failed.
    public var method: String

    public init(code: Code, message: String, field: String? = nil, data: JSONValue? = nil, method: String) {
        self.code = code
        self.message = message
        self.field = field
        self.data = data
        self.method = method
    }

    init(_ error: RPCError, method: String) {
        self.init(
            code: error.code, message: error.message, field: error.data?["field"]?.stringValue,
            data: error.data, method: method)
    }

    public var description: String { "\(method): \(message) (\(code))" }
}

/// A failure of the client or its transport rather than an answer of the engine.
public enum ChatfeedClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No `chatfeedd` beside the executable or on the `PATH`.
    case executableNotFound
    /// The transport could not be opened.
    case cannotStart(String)
    /// The client was closed.
    case connectionClosed
    /// The connection ended while the request was in flight: a write may or may not have been
    /// applied. The client reconnects; the request is not retried.
    case connectionLost(String)
    /// The connection ended and could not be opened again.
    case reconnectFailed(String)
    /// The engine answered something this client cannot read.
    case malformedResponse(method: String, reason: String)
    /// No answer came within the client's `requestTimeout`: the request may or may not have
    /// been applied.
    case timedOut(method: String, after: Duration)

    public var description: String {
        switch self {
        case .executableNotFound: "cannot find chatfeedd beside this executable or on the PATH; build it with 'swift build'"
        case .cannotStart(let reason): "cannot start the engine: \(reason)"
        case .connectionClosed: "the client is closed"
        case .connectionLost(let reason): "the connection to the engine was lost (\(reason)); the request may or may not have been applied"
        case .reconnectFailed(let reason): "the connection to the engine was lost and cannot be reopened: \(reason)"
        case .malformedResponse(let method, let reason): "unreadable answer to \(method): \(reason)"
        case .timedOut(let method, let limit): "no answer to \(method) within \(limit); it may or may not have been applied"
        }
    }
}

/// Why a subscription's sequence stopped: the client's mirror and the engine's feed disagree, so
/// applying more would corrupt the app's table. Never a silent drift.
public enum FeedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A notification's `seq` is not the one after the last (a lost or repeated notification).
    case seqGap(subscription: String, expected: Int64, received: Int64)
    /// A batch that UIKit would refuse when applied to the mirror.
    case invalidBatch(subscription: String, seq: Int64, violation: BatchRuleViolation)
    /// An update names another chat than the mirror has at its index.
    case updateOfAnotherRow(subscription: String, seq: Int64, index: Int, mirrored: String, received: String)
    /// After applying a notification (or, at seq 0, a resume's batches), the mirror has another
    /// number of rows than it announces.
    case countMismatch(subscription: String, seq: Int64, announced: Int, mirrored: Int)
    /// A notification this client cannot read.
    case malformedNotification(subscription: String, reason: String)
    /// The connection was lost and subscribing again failed.
    case resubscribeFailed(reason: String)

    public var description: String {
        switch self {
        case .seqGap(let subscription, let expected, let received):
            "subscription \(subscription): expected seq \(expected), received \(received)"
        case .invalidBatch(let subscription, let seq, let violation):
            "subscription \(subscription), seq \(seq): \(violation)"
        case .updateOfAnotherRow(let subscription, let seq, let index, let mirrored, let received):
            "subscription \(subscription), seq \(seq): update of row \(index) carries chat '\(received)' where the mirror has '\(mirrored)'"
        case .countMismatch(let subscription, let seq, let announced, let mirrored):
            "subscription \(subscription), seq \(seq): the \(seq == 0 ? "subscribe answer" : "notification") says \(announced) rows, the mirror has \(mirrored)"
        case .malformedNotification(let subscription, let reason):
            "subscription \(subscription): unreadable notification: \(reason)"
        case .resubscribeFailed(let reason):
            "the connection was lost and subscribing again failed: \(reason)"
        }
    }
}
