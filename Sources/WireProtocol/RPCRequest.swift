import JSONCodec

/// A JSON-RPC 2.0 request or notification read from one line.
public struct RPCRequest: Hashable, Sendable {
    /// The request id (a string, a number or null) exactly as sent; nil for a notification.
    public var id: JSONValue?
    public var method: String {
        didSet { wireMethod = WireMethod(rawValue: method) }
    }
    /// An object or an array, or nil when absent.
    public var params: JSONValue?
    /// `method`, when it is one of the protocol's: matched once, where the request is decoded (a
    /// session's sender), not on the engine thread at each of its three or four uses.
    public private(set) var wireMethod: WireMethod?

    public init(id: JSONValue?, method: String, params: JSONValue? = nil) {
        self.id = id
        self.method = method
        self.params = params
        wireMethod = WireMethod(rawValue: method)
    }

    /// A notification never gets a response.
    @inlinable
    public var isNotification: Bool { id == nil }
}

/// A line that is not a valid request: the error to answer and the id to answer it with.
public struct RPCRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request's id when it could be read, else nil (answer with id null).
    public var id: JSONValue?
    public var error: RPCError

    public init(id: JSONValue?, error: RPCError) {
        self.id = id
        self.error = error
    }

    /// The error response line (id null when unreadable), ending in `\n`.
    public var responseLine: [UInt8] { RPCMessage.errorResponse(id: id, error: error) }

    public var description: String { error.description }
}

extension RPCRequest {
    /// Decodes one line: −32700 for bad JSON or UTF-8 (with the id when it can be read before the
    /// damage, see `JSONValue.readableID(in:)`), −32600 for JSON that is not a request
    /// (not an object, `jsonrpc` not "2.0", `method` missing or not a string, `id` not a string,
    /// number or null, `params` not an object or array).
    public static func decode(line: UnsafeRawBufferPointer, maxDepth: Int = JSONValue.defaultMaxDepth) throws(RPCRequestError) -> RPCRequest {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line, maxDepth: maxDepth)
        } catch {
            throw RPCRequestError(id: JSONValue.readableID(in: line), error: RPCError(
                code: .parseError, message: "parse error: \(error)",
                data: ["offset": .integer(error.offset)]))
        }
        return try RPCRequest(value)
    }

    /// Decodes one line (see `decode(line:maxDepth:)` on raw bytes).
    public static func decode(line: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) throws(RPCRequestError) -> RPCRequest {
        let result = line.withUnsafeBytes { raw in
            Result { () throws(RPCRequestError) in try decode(line: raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Decodes one line (see `decode(line:maxDepth:)` on raw bytes).
    public static func decode(line: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(RPCRequestError) -> RPCRequest {
        try decode(line: Array(line.utf8), maxDepth: maxDepth)
    }

    /// Validates a parsed JSON value as a request (the −32600 cases of `decode(line:)`).
    public init(_ value: JSONValue) throws(RPCRequestError) {
        guard case .object(let object) = value else {
            let message = if case .array = value {
                "invalid request: batch requests (arrays) are not supported; send one request per line"
            } else {
                "invalid request: a request must be a JSON object, not \(value.typeDescription)"
            }
            throw RPCRequestError(id: nil, error: RPCError(code: .invalidRequest, message: message))
        }
        var id: JSONValue?
        var version: JSONValue?
        var method: JSONValue?
        var params: JSONValue?
        for member in object.members {
            switch member.key {
            case "id": id = member.value
            case "jsonrpc": version = member.value
            case "method": method = member.value
            case "params": params = member.value
            default: break
            }
        }
        func invalid(_ reason: String, id: JSONValue?) -> RPCRequestError {
            RPCRequestError(id: id, error: RPCError(code: .invalidRequest, message: "invalid request: \(reason)"))
        }
        switch id {
        case nil, .string?, .number?, .null?: break
        case let other?:
            throw invalid("'id' must be a string, a number or null, not \(other.typeDescription)", id: nil)
        }
        guard version == .string("2.0") else {
            throw invalid(version == nil ? "'jsonrpc' is missing; it must be \"2.0\"" : "'jsonrpc' must be \"2.0\"", id: id)
        }
        guard let method else { throw invalid("'method' is missing", id: id) }
        guard case .string(let name) = method else {
            throw invalid("'method' must be a string, not \(method.typeDescription)", id: id)
        }
        switch params {
        case nil, .object?, .array?: break
        case let other?:
            throw invalid("'params' must be an object or an array, not \(other.typeDescription)", id: id)
        }
        self.init(id: id, method: name, params: params)
    }
}
