import ChatModel
import JSONCodec

/// A JSON-RPC error object (docs/PROTOCOL.md).
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: RPCErrorCode
    public var message: String
    public var data: JSONValue?

    public init(code: RPCErrorCode, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error of a domain failure: invalid params (−32602, `data.field` names the field),
    /// not found (−32001), conflict (−32002), limit reached (−32005) or forbidden (−32007,
    /// `data.right` names the right).
    public init(_ error: ChatError) {
        switch error {
        case .invalidParams(let field, _):
            self.init(code: .invalidParams, message: error.description, data: ["field": .string(field)])
        case .notFound(let kind, let id):
            self.init(code: .notFound, message: error.description, data: ["kind": .string(kind), "id": .string(id)])
        case .conflict:
            self.init(code: .conflict, message: error.description)
        case .limitReached(let setting, let limit, _):
            self.init(
                code: .limitReached, message: error.description,
                data: ["setting": .string(setting), "limit": .integer(Int64(limit))])
        case .forbidden(let right, _):
            self.init(code: .forbidden, message: error.description, data: ["right": .string(right)])
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
            self.init(code: .internalError, message: "internal error: \(error)")
        }
    }

    /// −32601 for a method this server does not know.
    public static func unknownMethod(_ method: String) -> RPCError {
        RPCError(code: .methodNotFound, message: "unknown method '\(method)'", data: ["method": .string(method)])
    }

    /// −32003 for a line longer than `limit` bytes.
    public static func tooLong(limit: Int) -> RPCError {
        RPCError(code: .lineTooLong, message: "line too long: the limit is \(limit) bytes", data: ["limit": .integer(limit)])
    }

    public var description: String { "\(message) (\(code))" }

    /// The `error` member of a response: `{"code","message"[,"data"]}`.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["code": .integer(code.rawValue), "message": .string(message)]
        if let data { object.append("data", data) }
        return .object(object)
    }
}
