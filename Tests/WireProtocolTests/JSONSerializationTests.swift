import Testing
import JSONCodec
import TestSupport
@testable import WireProtocol

@Suite struct JSONSerializationTests {
    @Test func compactOutput() {
        let value: JSONValue = ["b": [1, -2, nil, true, false], "a": ["x": "y"], "d": .double(0.5)!]
        #expect(value.serialized().text == #"{"b":[1,-2,null,true,false],"a":{"x":"y"},"d":0.5}"#)
        #expect(JSONValue.object([:]).serialized().text == "{}")
        #expect(JSONValue.array([]).serialized().text == "[]")
    }

    @Test func integersExact() {
        #expect(JSONValue.integer(Int64.max).serialized().text == "9223372036854775807")
        #expect(JSONValue.integer(Int64.min).serialized().text == "-9223372036854775808")
        #expect(JSONValue.integer(0).serialized().text == "0")
        #expect(JSONValue.integer(-7).serialized().text == "-7")
        #expect(JSONValue.integer(1_700_000_000_123).serialized().text == "1700000000123")
    }

    @Test func doubles() throws {
        #expect(JSONValue.double(.nan) == nil)
        #expect(JSONValue.double(.infinity) == nil)
        #expect(JSONValue.double(-.infinity) == nil)
        for double in [0.1, 1.0, -0.0, 1e300, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 123456.789, 1e16, 2.5e-7] {
            let text = JSONValue.double(double)!.serialized()
            let back = try JSONValue(parsing: text)
            #expect(back.numberValue?.doubleValue == double, "\(text.text)")
            #expect(back.numberValue?.isInteger == false, "\(text.text)")
        }
    }

    @Test func stringEscaping() throws {
        let string = "q\"b\\s/\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é😀"
        let text = JSONValue.string(string).serialized().text
        #expect(text == #""q\"b\\s/\n\r\t\b\f\u0000\u001f"# + "\u{7F}é😀\"")
        #expect(try JSONValue(parsing: text) == .string(string))
    }

    @Test func randomRoundTrips() throws {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        for _ in 0..<2_000 {
            let value = randomValue(depth: 0, using: &generator)
            let bytes = value.serialized()
            let back = try JSONValue(parsing: bytes)
            #expect(back == value, "\(bytes.text)")
            #expect(back.serialized() == bytes)
        }
    }

    private func randomString(using generator: inout SeededGenerator) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "日",
            "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}", "\u{2028}",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            scalars.append(pool.randomElement(using: &generator)!)
        }
        return String(scalars)
    }

    private func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        let kind = Int.random(in: 0..<(depth > 4 ? 6 : 8), using: &generator)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2:
            let choices: [Int64] = [0, -1, .max, .min, Int64.random(in: .min ... .max, using: &generator)]
            return .integer(choices.randomElement(using: &generator)!)
        case 3:
            let bits = UInt64.random(in: 0 ... .max, using: &generator)
            let double = Double(bitPattern: bits)
            return .double(double) ?? .double(Double.random(in: -1e6...1e6, using: &generator))!
        case 4, 5: return .string(randomString(using: &generator))
        case 6:
            return .array((0..<Int.random(in: 0...5, using: &generator)).map { _ in
                randomValue(depth: depth + 1, using: &generator)
            })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0...5, using: &generator) {
                object.append(randomString(using: &generator) + "#\(index)", randomValue(depth: depth + 1, using: &generator))
            }
            return .object(object)
        }
    }
}
