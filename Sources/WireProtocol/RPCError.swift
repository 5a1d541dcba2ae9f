import ChatModel
import JSONCodec

/// A JSON-RPC error object (SPEC §5).
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    /// Bad JSON or bad UTF-8.
    public static let parseError = -32700
    /// Valid JSON that is not a JSON-RPC 2.0 request.
    public static let invalidRequest = -32600
    public static let methodNotFound = -32601
    /// A parameter is missing, has the wrong type or an invalid value; the message names it.
    public static let invalidParams = -32602
    public static let internalError = -32603
    public static let notFound = -32001
    public static let conflict = -32002
    public static let lineTooLong = -32003
    /// The disk holding the database (or its size limit) is full; nothing was written.
    public static let storageFull = -32004
    /// The daemon was started with `--read-only`: it takes no writes.
    public static let readOnly = -32006
    /// A configured limit of the daemon is reached (too many subscriptions); `data.setting`
    /// names the configuration key and `data.limit` its value.
    public static let limitReached = -32005

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error of a domain failure: invalid params (−32602, `data.field` names the field),
    /// not found (−32001), conflict (−32002) or limit reached (−32005).
    public init(_ error: ChatError) {
        switch error {
        case .invalidParams(let field, _):
            self.init(code: Self.invalidParams, message: error.description, data: ["field": .string(field)])
        case .notFound(let kind, let id):
            self.init(code: Self.notFound, message: error.description, data: ["kind": .string(kind), "id": .string(id)])
        case .conflict:
            self.init(code: Self.conflict, message: error.description)
        case .limitReached(let setting, let limit, _):
            self.init(
                code: Self.limitReached, message: error.description,
                data: ["setting": .string(setting), "limit": .integer(Int64(limit))])
        }
    }

    /// The error to answer for any failure: `RPCError` as is, `ChatError` mapped, anything else
    /// an internal error (−32603) with its description.
    public init(mapping error: any Error) {
        if let error = error as? RPCError {
            self = error
        } else if let error = error as? ChatError {
            self.init(error)
        } else {
            self.init(code: Self.internalError, message: "internal error: \(error)")
        }
    }

    /// −32601 for a method this server does not know.
    public static func unknownMethod(_ method: String) -> RPCError {
        RPCError(code: methodNotFound, message: "unknown method '\(method)'", data: ["method": .string(method)])
    }

    /// −32003 for a line longer than `limit` bytes.
    public static func tooLong(limit: Int) -> RPCError {
        RPCError(code: lineTooLong, message: "line too long: the limit is \(limit) bytes", data: ["limit": .integer(limit)])
    }

    public var description: String { "\(message) (\(code))" }

    /// The `error` member of a response: `{"code","message"[,"data"]}`.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["code": .integer(code), "message": .string(message)]
        if let data { object.append("data", data) }
        return .object(object)
    }
}
