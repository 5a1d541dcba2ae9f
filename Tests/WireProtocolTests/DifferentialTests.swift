import Foundation
import Testing
import JSONCodec
import TestSupport
@testable import WireProtocol

/// Foundation's JSONSerialization as an independent oracle on damaged input: both parsers must
/// accept and reject the same texts, except where ours is stricter by design (and where
/// Foundation is lenient: trailing commas).
@Suite struct DifferentialTests {
    @Test func agreesWithFoundation() throws {
        var generator = SeededGenerator(seed: 2024)
        let interesting: [UInt8] = [
            0x00, 0x09, 0x0A, 0x20, 0x22, 0x2B, 0x2C, 0x2D, 0x2E, 0x30, 0x31, 0x3A, 0x45, 0x5B, 0x5C, 0x5D, 0x65,
            0x66, 0x6E, 0x74, 0x75, 0x7B, 0x7D, 0x80, 0xC3, 0xE0, 0xED, 0xF0, 0xFF,
        ]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            var bytes = FuzzTests.seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = interesting.randomElement(using: &generator)!
                case 1: bytes.remove(at: position)
                default: bytes.insert(interesting.randomElement(using: &generator)!, at: position)
                }
                if bytes.isEmpty { bytes = [0x20] }
            }
            let ours: Result<JSONValue, JSONParseError> = Result { () throws(JSONParseError) in try JSONValue(parsing: bytes) }
            let theirs = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            switch ours {
            case .success(let value):
                // A number beyond a double's range is JSON; Foundation refuses it.
                if theirs == nil && !value.serialized().text.contains("e") {
                    disagreements.append("only ours accepts: \(bytes.text.debugDescription)")
                }
            case .failure(let error):
                switch error.reason {
                case .duplicateKey, .loneSurrogate, .tooDeep: continue
                case .unexpectedByte(UInt8(ascii: "]"), _), .unexpectedByte(UInt8(ascii: "}"), _):
                    // Foundation accepts a trailing comma; RFC 8259 does not.
                    let before = bytes[..<error.offset].last { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
                    if before == UInt8(ascii: ",") { continue }
                default: break
                }
                if theirs != nil { disagreements.append("only Foundation accepts (\(error)): \(bytes.text.debugDescription)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }
}
