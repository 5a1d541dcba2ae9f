import ChatModel
import JSONCodec

/// A line written by the daemon, as a client (`chatfeed watch`, tests) reads it.
public enum RPCServerMessage: Hashable, Sendable {
    case result(id: JSONValue, result: JSONValue)
    case error(id: JSONValue, error: RPCError)
    case notification(method: String, params: JSONValue)

    /// Decodes one line; a line that is not a JSON-RPC 2.0 response or notification is a
    /// −32700 or −32600 `RPCError`.
    public init(line: [UInt8]) throws(RPCError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line)
        } catch {
            throw RPCError(code: .parseError, message: "parse error: \(error)")
        }
        try self.init(value)
    }

    public init(_ value: JSONValue) throws(RPCError) {
        func invalid(_ reason: String) -> RPCError {
            RPCError(code: .invalidRequest, message: "invalid message: \(reason)")
        }
        guard case .object(let object) = value else { throw invalid("not an object") }
        guard object["jsonrpc"] == "2.0" else { throw invalid("'jsonrpc' must be \"2.0\"") }
        if let method = object["method"] {
            guard case .string(let name) = method else { throw invalid("'method' must be a string") }
            self = .notification(method: name, params: object["params"] ?? .null)
            return
        }
        guard let id = object["id"] else { throw invalid("neither 'method' nor 'id'") }
        if let result = object["result"] {
            self = .result(id: id, result: result)
            return
        }
        guard case .object(let error)? = object["error"],
              let code = error["code"]?.int64Value, case .string(let message)? = error["message"]
        else { throw invalid("neither 'result' nor a valid 'error'") }
        self = .error(id: id, error: RPCError(code: RPCErrorCode(rawValue: Int(code)), message: message, data: error["data"]))
    }
}
