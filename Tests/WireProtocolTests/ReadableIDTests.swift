import Testing
import JSONCodec
@testable import WireProtocol

@Suite struct ReadableIDTests {
    private func id(_ text: String) -> JSONValue? {
        Array(text.utf8).withUnsafeBytes { JSONValue.readableID(in: $0) }
    }

    @Test func readsTheIDBeforeTheDamage() {
        #expect(id(#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"text":"\x"}}"#) == 7)
        #expect(id(#"{"id":"a\"b","method":"#) == "a\"b")
        #expect(id(#" { "jsonrpc" : "2.0" , "id" : null , "#) == .null)
        #expect(id(#"{"method":"m","params":{"a":[1,{"id":3}],"s":"}],\"x"},"id":-12.5,"#) == .double(-12.5)!)
        #expect(id(#"{"params":"x","id":9}"#) == 9)
    }

    @Test func noIDWhenUnreadable() {
        #expect(id(#"{"jsonrpc":"2.0","method":"m"}"#) == nil)
        #expect(id(#"{"jsonrpc":"2.0","id":7"#) == nil)
        #expect(id(#"{"jsonrpc":"2.0","id":7x,"#) == nil)
        #expect(id(#"{"id":"unterminated"#) == nil)
        #expect(id(#"{"id":true,"#) == nil)
        #expect(id(#"{"id":[1],"#) == nil)
        #expect(id(#"{"params":{"id":1},"#) == nil)
        #expect(id(#"[{"id":1}]"#) == nil)
        #expect(id(#"{"a" 1, "id": 2}"#) == nil)
        #expect(id("") == nil)
    }

    @Test func parseErrorsEchoAReadableID() throws {
        var line = Array(#"{"jsonrpc":"2.0","id":41,"method":"message.post","params":{"text":""#.utf8)
        line += [0xED, 0xA0, 0x80]
        line += Array(#""}}"#.utf8)
        do {
            _ = try RPCRequest.decode(line: line)
            Issue.record("decoded")
        } catch {
            #expect(error.error.code == RPCErrorCode.parseError)
            #expect(error.id == 41)
        }
    }

    @Test func tooLongLinesCarryTheirPrefix() {
        var framer = LineFramer(maxLineBytes: 64)
        let long = #"{"jsonrpc":"2.0","id":"req-1","method":"message.post","params":{"text":""# + String(repeating: "x", count: 200) + "\"}}\n"
        var ids: [JSONValue?] = []
        let bytes = Array(long.utf8)
        for chunkStart in stride(from: 0, to: bytes.count, by: 10) {
            Array(bytes[chunkStart..<min(bytes.count, chunkStart + 10)]).withUnsafeBytes { raw in
                framer.feed(raw) { event in
                    if case .tooLong(let prefix) = event {
                        #expect(prefix.count >= 65 && prefix.count <= 75)
                        ids.append(JSONValue.readableID(in: prefix))
                    }
                }
            }
        }
        bytes.withUnsafeBytes { raw in
            framer.feed(raw) { event in
                if case .tooLong(let prefix) = event {
                    #expect(prefix.count == LineFramer.tooLongPrefixBytes || prefix.count == bytes.count - 1)
                    ids.append(JSONValue.readableID(in: prefix))
                }
            }
        }
        #expect(ids == ["req-1", "req-1"])
    }
}
