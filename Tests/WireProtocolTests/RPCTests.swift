import ChatModel
import Testing
import JSONCodec
@testable import WireProtocol

@Suite struct RPCTests {
    private func failure(_ line: String) -> RPCRequestError? {
        do {
            let request = try RPCRequest.decode(line: line)
            Issue.record("decoded \(request)")
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ bytes: [UInt8]) -> RPCRequestError? {
        do {
            _ = try RPCRequest.decode(line: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func requestsAndNotifications() throws {
        let request = try RPCRequest.decode(line: #"{"jsonrpc":"2.0","id":7,"method":"chats.list","params":{"limit":2}}"#)
        #expect(request == RPCRequest(id: .integer(7), method: "chats.list", params: ["limit": 2]))
        #expect(!request.isNotification)
        let notification = try RPCRequest.decode(line: #"{"method":"feed.ack","params":{"subscription":"s","seq":1},"jsonrpc":"2.0"}"#)
        #expect(notification.isNotification)
        #expect(notification.id == nil)
        let nullID = try RPCRequest.decode(line: #"{"jsonrpc":"2.0","id":null,"method":"server.stats"}"#)
        #expect(nullID.id == .null)
        #expect(!nullID.isNotification)
        #expect(nullID.params == nil)
        let positional = try RPCRequest.decode(line: #"{"jsonrpc":"2.0","id":"a","method":"m","params":[1]}"#)
        #expect(positional.params == [1])
        let extra = try RPCRequest.decode(line: #"{"jsonrpc":"2.0","id":"a","method":"m","extra":true}"#)
        #expect(extra.method == "m")
    }

    /// A decoded request knows its method as the protocol's, once, and follows a change of it.
    @Test func aRequestMatchesItsMethodOnce() throws {
        var request = try RPCRequest.decode(line: #"{"jsonrpc":"2.0","id":1,"method":"message.post","params":{}}"#)
        #expect(request.wireMethod == .messagePost)
        request.method = "no.such"
        #expect(request.wireMethod == nil)
        #expect(throws: RPCError.unknownMethod("no.such")) { try WireCommand(request, now: 0) }
        request.method = WireMethod.chatsList.rawValue
        #expect(request.wireMethod == .chatsList)
        #expect(try WireCommand(request, now: 0) == WireCommand(method: "chats.list", params: nil, now: 0))
    }

    @Test func parseErrors() {
        for line in ["{", "not json", #"{"jsonrpc":"2.0","method":"m",}"#, "[1,]", "\"\\ud800\"", #"{"id":{},"#] {
            let error = failure(line)
            #expect(error?.error.code == RPCErrorCode.parseError, "\(line)")
            #expect(error?.id == nil, "\(line)")
        }
        // An id read before the damage is echoed.
        #expect(failure(#"{"jsonrpc":"2.0","id":1,"method":"m",}"#)?.id == 1)
        #expect(failure(#"{"jsonrpc":"2.0","id":"q","method":"m","params":{"a":01}}"#)?.id == "q")
        let badUTF8 = Array(#"{"jsonrpc":"2.0","id":[],"method":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)
        let error = failure(badUTF8)
        #expect(error?.error.code == RPCErrorCode.parseError)
        #expect(error?.error.message.contains("invalid UTF-8") == true)
        #expect(error?.error.data == ["offset": 35])
        #expect(error?.id == nil)
        #expect(error?.responseLine.text
            == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid UTF-8 at byte 35","data":{"offset":35}}}"# + "\n")
    }

    @Test func invalidRequests() {
        let cases: [(String, JSONValue?)] = [
            ("[]", nil),
            (#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#, nil),
            ("42", nil),
            (#""x""#, nil),
            ("null", nil),
            (#"{"id":1,"method":"m"}"#, .integer(1)),
            (#"{"jsonrpc":"1.0","id":"a","method":"m"}"#, .string("a")),
            (#"{"jsonrpc":2.0,"id":"a","method":"m"}"#, .string("a")),
            (#"{"jsonrpc":"2.0","id":2}"#, .integer(2)),
            (#"{"jsonrpc":"2.0","id":2,"method":5}"#, .integer(2)),
            (#"{"jsonrpc":"2.0","id":2,"method":null}"#, .integer(2)),
            (#"{"jsonrpc":"2.0","id":3,"method":"m","params":"x"}"#, .integer(3)),
            (#"{"jsonrpc":"2.0","id":3,"method":"m","params":null}"#, .integer(3)),
            (#"{"jsonrpc":"2.0","id":3,"method":"m","params":7}"#, .integer(3)),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#, nil),
            (#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#, nil),
            (#"{"jsonrpc":"2.0","id":true,"method":"m"}"#, nil),
            (#"{"jsonrpc":"2.0","method":7}"#, nil),
            (#"{"jsonrpc":"2.0","id":null}"#, .null),
        ]
        for (line, id) in cases {
            let error = failure(line)
            #expect(error?.error.code == RPCErrorCode.invalidRequest, "\(line)")
            #expect(error?.id == id, "\(line)")
        }
        #expect(failure("[]")?.error.message.contains("batch") == true)
        #expect(failure(#"{"jsonrpc":"2.0","id":3,"method":"m","params":"x"}"#)?.error.message
            == "invalid request: 'params' must be an object or an array, not a string")
    }

    @Test func idsAreEchoedExactly() throws {
        let ids = [
            #""abc""#, #""""#, #""é\n😀""#, "0", "-5", "9223372036854775807", "-9223372036854775808",
            "1.5", "1e3", "null", "123456789012345678901234567890",
        ]
        for idText in ids {
            let line = #"{"jsonrpc":"2.0","id":"# + idText + #","method":"m"}"#
            let request = try RPCRequest.decode(line: line)
            let id = try #require(request.id)
            #expect(id == (try JSONValue(parsing: idText)))
            let response = RPCMessage.resultResponse(id: id, result: ["ok": true])
            let echoed = try JSONValue(parsing: Array(response.dropLast()))
            #expect(echoed["id"] == id)
            let invalid = failure(#"{"jsonrpc":"1","id":"# + idText + "}")
            #expect(invalid?.id == id)
            #expect(try JSONValue(parsing: Array(try #require(invalid).responseLine.dropLast()))["id"] == id)
        }
        let exact = RPCMessage.resultResponse(id: .integer(9_007_199_254_740_993), result: nil)
        #expect(exact.text == #"{"jsonrpc":"2.0","id":9007199254740993,"result":null}"# + "\n")
        let string = RPCMessage.resultResponse(id: "x\"y", result: [:])
        #expect(string.text == #"{"jsonrpc":"2.0","id":"x\"y","result":{}}"# + "\n")
    }

    @Test func encoders() {
        #expect(RPCMessage.errorResponse(id: 4, error: RPCError(code: -32601, message: "no")).text
            == #"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"# + "\n")
        #expect(RPCMessage.notification(method: "feed.batch", params: ["seq": 1]).text
            == #"{"jsonrpc":"2.0","method":"feed.batch","params":{"seq":1}}"# + "\n")
        var output: [UInt8] = []
        RPCMessage.appendResultResponse(id: 1, result: 2, to: &output)
        RPCMessage.appendNotification(method: "n", params: [], to: &output)
        #expect(output.text == "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":2}\n{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[]}\n")
        #expect(RPCMessage.errorResponse(id: nil, error: .tooLong(limit: 10))
            == RPCMessage.errorResponse(id: .null, error: .tooLong(limit: 10)))
        #expect(RPCMessage.errorResponse(id: .null, error: .tooLong(limit: 10)).text
            == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32003,"message":"line too long: the limit is 10 bytes","data":{"limit":10}}}"# + "\n")
    }

    @Test func errorCodes() {
        #expect(RPCErrorCode.parseError == -32700)
        #expect(RPCErrorCode.invalidRequest == -32600)
        #expect(RPCErrorCode.methodNotFound == -32601)
        #expect(RPCErrorCode.invalidParams == -32602)
        #expect(RPCErrorCode.internalError == -32603)
        #expect(RPCErrorCode.notFound == -32001)
        #expect(RPCErrorCode.conflict == -32002)
        #expect(RPCErrorCode.lineTooLong == -32003)
    }

    @Test func errorMapping() {
        let invalid = RPCError(ChatError.invalidParams(field: "sentAt", reason: "is required"))
        #expect(invalid == RPCError(code: -32602, message: "invalid 'sentAt': is required", data: ["field": "sentAt"]))
        let missing = RPCError(ChatError.notFound(kind: "chat", id: "c1"))
        #expect(missing == RPCError(code: -32001, message: "no chat with id 'c1'", data: ["kind": "chat", "id": "c1"]))
        let conflict = RPCError(ChatError.conflict("message 'm' exists with other content"))
        #expect(conflict.code == -32002)
        #expect(conflict.message == "message 'm' exists with other content")

        struct DiskFull: Error, CustomStringConvertible { var description: String { "disk full" } }
        let other = RPCError(mapping: DiskFull())
        #expect(other.code == -32603)
        #expect(other.message == "internal error: disk full")
        #expect(RPCError(mapping: ChatError.notFound(kind: "message", id: "m")).code == -32001)
        #expect(RPCError(mapping: RPCError.unknownMethod("x")) == RPCError.unknownMethod("x"))
    }
}
