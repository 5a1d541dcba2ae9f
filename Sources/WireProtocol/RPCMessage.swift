import JSONCodec

/// Encoders of outgoing JSON-RPC lines. Each returns (or appends) one line ending in `\n`.
public enum RPCMessage {
    /// `{"jsonrpc":"2.0"[,"id":…],"method":…,"params":…}\n`: a request (a notification without `id`).
    public static func requestLine(id: JSONValue?, method: String, params: JSONObject) -> [UInt8] {
        var request: JSONObject = ["jsonrpc": "2.0"]
        if let id { request.append("id", id) }
        request.append("method", .string(method))
        request.append("params", .object(params))
        var line = JSONValue.object(request).serialized()
        line.append(0x0A)
        return line
    }

    /// `{"jsonrpc":"2.0","id":…,"result":…}\n`
    public static func resultResponse(id: JSONValue, result: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        appendResultResponse(id: id, result: result, to: &output)
        return output
    }

    /// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…[,"data":…]}}\n`; a nil id (the
    /// request's id was unreadable) is written as null.
    public static func errorResponse(id: JSONValue?, error: RPCError) -> [UInt8] {
        var output: [UInt8] = []
        appendErrorResponse(id: id, error: error, to: &output)
        return output
    }

    /// `{"jsonrpc":"2.0","method":…,"params":…}\n`
    public static func notification(method: String, params: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        appendNotification(method: method, params: params, to: &output)
        return output
    }

    public static func appendResultResponse(id: JSONValue, result: JSONValue, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.serialize(into: &output)
        output.append(contentsOf: #","result":"#.utf8)
        result.serialize(into: &output)
        output.append(contentsOf: "}\n".utf8)
    }

    public static func appendErrorResponse(id: JSONValue?, error: RPCError, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        (id ?? .null).serialize(into: &output)
        output.append(contentsOf: #","error":"#.utf8)
        error.jsonValue.serialize(into: &output)
        output.append(contentsOf: "}\n".utf8)
    }

    public static func appendNotification(method: String, params: JSONValue, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONOutput.appendString(method, to: &output)
        output.append(contentsOf: #","params":"#.utf8)
        params.serialize(into: &output)
        output.append(contentsOf: "}\n".utf8)
    }
}
