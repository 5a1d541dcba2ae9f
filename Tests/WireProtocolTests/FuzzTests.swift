import ChatModel
import Testing
import JSONCodec
@testable import WireProtocol
import TestSupport

/// Random damage to valid input must give an error or a value, never a crash, and every value
/// that parses must survive a round trip.
@Suite struct FuzzTests {
    static let seeds: [[UInt8]] = [
        #"{"jsonrpc":"2.0","id":1,"method":"message.post","params":{"chat":"c1","id":"m1","sender":"a","text":"hé 😀 \n\u00e9\ud83d\ude00","sentAt":1700000000000}}"#,
        #"{"jsonrpc":"2.0","id":"x","method":"chats.locate","params":{"ids":["a","b"]}}"#,
        #"{"jsonrpc":"2.0","method":"feed.ack","params":{"subscription":"s1","seq":3}}"#,
        #"[1,-2.5e-3,true,false,null,{"a":[{}],"b":"\\\/"}]"#,
    ].map { Array($0.utf8) }

    @Test func mutatedInputNeverCrashes() throws {
        var generator = SeededGenerator(seed: 7)
        let interesting: [UInt8] = [
            0x00, 0x0A, 0x22, 0x2C, 0x2D, 0x2E, 0x30, 0x31, 0x3A, 0x5B, 0x5C, 0x5D, 0x65, 0x75, 0x7B, 0x7D,
            0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF,
        ]
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = Self.seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[position] = interesting.randomElement(using: &generator)!
                case 1: bytes[position] = UInt8.random(in: 0...255, using: &generator)
                case 2: bytes.remove(at: position)
                default: bytes.insert(interesting.randomElement(using: &generator)!, at: position)
                }
                if bytes.isEmpty { bytes = [0x20] }
            }
            if let value = try? JSONValue(parsing: bytes) {
                parsed += 1
                let text = value.serialized()
                #expect(try JSONValue(parsing: text) == value)
            }
            do {
                let request = try RPCRequest.decode(line: bytes)
                do {
                    _ = try WireCommand(request, now: 0)
                } catch {
                    #expect([RPCErrorCode.methodNotFound, RPCErrorCode.invalidParams].contains(error.code), "\(error)")
                }
            } catch {
                #expect([RPCErrorCode.parseError, RPCErrorCode.invalidRequest].contains(error.error.code))
                _ = error.responseLine
            }
        }
        // The mutations leave enough valid JSON to exercise both paths.
        #expect(parsed > 1_000)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? JSONValue(parsing: bytes)
            _ = try? RPCRequest.decode(line: [UInt8(ascii: "{")] + bytes)
            _ = try? RPCRequest.decode(line: Array(#"{"id":"#.utf8) + bytes)
            var framer = LineFramer(maxLineBytes: 16)
            _ = framer.feed(bytes)
            _ = framer.finish()
        }
    }
}
