/// A JSON-RPC error code (docs/PROTOCOL.md, docs/PROTOCOL.md), with a name for every code the engine
/// answers: the one list the engine, the client and an app match on (`case .notFound:` in a
/// `switch` over `error.code`, through `~=`). An unknown code (a newer server) keeps its value.
public struct RPCErrorCode: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(integerLiteral value: Int) { rawValue = value }

    /// −32700: the line is not JSON (bad JSON, bad UTF-8).
    public static let parseError: RPCErrorCode = -32700
    /// −32600: valid JSON that is not a JSON-RPC 2.0 request (a batch array, a missing method…).
    public static let invalidRequest: RPCErrorCode = -32600
    /// −32601: the engine does not know the method (an older `chatfeedd`).
    public static let methodNotFound: RPCErrorCode = -32601
    /// −32602: a parameter is missing, has the wrong type or an invalid value; the message names
    /// it and `data.field` holds it.
    public static let invalidParams: RPCErrorCode = -32602
    /// −32603: the engine failed (a disk error, say).
    public static let internalError: RPCErrorCode = -32603
    /// −32001: no chat, message or subscription with that id (another session's subscription
    /// is not found either).
    public static let notFound: RPCErrorCode = -32001
    /// −32002: the write conflicts with the store (an existing id with other content, a pin
    /// beyond `maxPinnedChats`…).
    public static let conflict: RPCErrorCode = -32002
    /// −32003: the request line is longer than `maxLineBytes`.
    public static let lineTooLong: RPCErrorCode = -32003
    /// −32004: the disk holding the database (or its `maxDatabaseMiB`) is full; nothing was written.
    public static let storageFull: RPCErrorCode = -32004
    /// −32005: a configured limit is reached (too many subscriptions); `data.setting` names the
    /// configuration key and `data.limit` its value.
    public static let limitReached: RPCErrorCode = -32005
    /// −32006: the engine was started read-only (`--read-only`): it takes no writes.
    public static let readOnly: RPCErrorCode = -32006
    /// −32007: the session acts beyond its rights (a gateway session acting as another user);
    /// the message says which right; nothing changed.
    public static let forbidden: RPCErrorCode = -32007

    /// Every named code, in the order of docs/PROTOCOL.md.
    public static let allNamed: [RPCErrorCode] = [
        .parseError, .invalidRequest, .methodNotFound, .invalidParams, .internalError, .notFound, .conflict,
        .lineTooLong, .storageFull, .limitReached, .readOnly, .forbidden,
    ]

    /// `case .notFound:` in a `switch` over a code.
    public static func ~= (pattern: RPCErrorCode, code: RPCErrorCode) -> Bool { pattern == code }

    public var description: String { "\(rawValue)" }
}
