import Testing
@testable import JSONCodec

@Suite struct JSONParserTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSONValue { try JSONValue(parsing: text) }

    private func reason(_ bytes: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) -> JSONParseError? {
        do {
            _ = try JSONValue(parsing: bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private func reason(_ text: String) -> JSONParseError? { reason(Array(text.utf8)) }

    @Test func scalars() throws {
        #expect(try parse("null") == .null)
        #expect(try parse(" true ") == .bool(true))
        #expect(try parse("\tfalse\r\n") == .bool(false))
        #expect(try parse("0") == .integer(0))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("42") == .integer(42))
        #expect(try parse("-17") == .integer(-17))
        #expect(try parse("1.5") == .double(1.5))
        #expect(try parse("-2.5e3") == .double(-2500))
        #expect(try parse("1E+2") == .double(100))
        #expect(try parse("1e-2") == .double(0.01))
        #expect(try parse("\"hi\"") == .string("hi"))
    }

    @Test func integersAreExact() throws {
        #expect(try parse("9223372036854775807") == .integer(Int64.max))
        #expect(try parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try parse("1234567890123456789") == .integer(1_234_567_890_123_456_789))
        // Beyond Int64: a double.
        let big = try parse("9223372036854775808")
        #expect(big.numberValue?.isInteger == false)
        #expect(big.numberValue?.doubleValue == 9_223_372_036_854_775_808.0)
        #expect(try parse("-9223372036854775809").numberValue?.isInteger == false)
        #expect(try parse("123456789012345678901234567890").numberValue?.doubleValue == 1.2345678901234568e29)
        #expect(try parse("1e308") == .double(1e308))
    }

    @Test func hugeNumbersAreNumbersWrittenBackAsSent() throws {
        for text in ["1e309", "-1e400", String(repeating: "9", count: 400), "-0", "[-0,1E400,-0.0]"] {
            #expect(try parse(text).serializedText == text)
        }
        #expect(try parse("1e309").numberValue?.doubleValue == .infinity)
        #expect(try parse("-1e400").numberValue?.doubleValue == -.infinity)
        #expect(try parse("1e400").int64Value == nil)
        // -0 is an integer 0 that keeps its sign in its text.
        #expect(try parse("-0") == .integer(0) && parse("-0").int64Value == 0)
        #expect(try parse("0").serializedText == "0")
        // Tiny numbers underflow to zero, which is finite.
        #expect((try? parse("1e-400")) == .double(0))
    }

    @Test func containersKeepOrder() throws {
        let value = try parse(#" { "b" : [1, "x", null, {"z": true}], "a" : {} , "c": [] } "#)
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == [1, "x", nil, ["z": true]])
        #expect(object["a"] == .object([:]))
        #expect(object["c"] == .array([]))
    }

    @Test func escapes() throws {
        #expect(try parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#) == .string("a\"b\\c/d\u{8}e\u{C}f\ng\rh\ti"))
        #expect(try parse(#""\u0041\u00e9\u20AC\u0000""#) == .string("Aé€\u{0}"))
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""x\uD83D\uDE00y""#) == .string("x😀y"))
        #expect(try parse("\"é😀\\n\"") == .string("é😀\n"))
        #expect(try parse("\"日本語\"") == .string("日本語"))
    }

    @Test func badEscapes() {
        #expect(reason(#""\x""#)?.reason == .invalidEscape)
        #expect(reason(#""\u12""#)?.reason == .invalidEscape)
        #expect(reason(#""\u12G4""#)?.reason == .invalidEscape)
        #expect(reason(#""\ud83d""#)?.reason == .loneSurrogate)
        #expect(reason(#""\ud83dx""#)?.reason == .loneSurrogate)
        #expect(reason(#""\ud83d\u0041""#)?.reason == .loneSurrogate)
        #expect(reason(#""\ude00""#)?.reason == .loneSurrogate)
        #expect(reason(#""\ude00\ud83d""#)?.reason == .loneSurrogate)
        #expect(reason(#""ab\ud83d""#)?.offset == 3)
    }

    @Test func malformedJSON() {
        let cases: [(String, JSONParseError.Reason)] = [
            ("", .unexpectedEnd),
            ("   ", .unexpectedEnd),
            ("[", .unexpectedEnd),
            ("[1", .unexpectedEnd),
            ("[1,", .unexpectedEnd),
            ("{", .unexpectedEnd),
            (#"{"a""#, .unexpectedEnd),
            (#"{"a":"#, .unexpectedEnd),
            (#""abc"#, .unexpectedEnd),
            ("tru", .unexpectedEnd),
            ("[1,]", .unexpectedByte(UInt8(ascii: "]"), expected: "a JSON value")),
            (#"{"a":1,}"#, .unexpectedByte(UInt8(ascii: "}"), expected: "a string key")),
            ("[1 2]", .unexpectedByte(UInt8(ascii: "2"), expected: "',' or ']'")),
            (#"{"a" 1}"#, .unexpectedByte(UInt8(ascii: "1"), expected: "':'")),
            (#"{"a":1 "b":2}"#, .unexpectedByte(UInt8(ascii: "\""), expected: "',' or '}'")),
            ("{a:1}", .unexpectedByte(UInt8(ascii: "a"), expected: "a string key")),
            ("{1:1}", .unexpectedByte(UInt8(ascii: "1"), expected: "a string key")),
            ("['a']", .unexpectedByte(UInt8(ascii: "'"), expected: "a JSON value")),
            ("NaN", .unexpectedByte(UInt8(ascii: "N"), expected: "a JSON value")),
            ("Infinity", .unexpectedByte(UInt8(ascii: "I"), expected: "a JSON value")),
            ("-Infinity", .invalidNumber),
            ("+1", .unexpectedByte(UInt8(ascii: "+"), expected: "a JSON value")),
            (".5", .unexpectedByte(UInt8(ascii: "."), expected: "a JSON value")),
            ("01", .invalidNumber),
            ("-01", .invalidNumber),
            ("00", .invalidNumber),
            ("1.", .invalidNumber),
            ("1.e5", .invalidNumber),
            ("1e", .invalidNumber),
            ("1e+", .invalidNumber),
            ("-", .invalidNumber),
            ("0x10", .trailingData),
            ("1 2", .trailingData),
            ("{} {}", .trailingData),
            ("nul", .unexpectedEnd),
            ("nulL", .unexpectedByte(UInt8(ascii: "L"), expected: "'null'")),
            ("True", .unexpectedByte(UInt8(ascii: "T"), expected: "a JSON value")),
            ("\"a\nb\"", .controlCharacterInString),
            ("\"a\tb\"", .controlCharacterInString),
            ("\"\u{1}\"", .controlCharacterInString),
            (#"{"a":1,"a":2}"#, .duplicateKey("a")),
            ("[1]\u{0}", .trailingData),
            ("/* c */ 1", .unexpectedByte(UInt8(ascii: "/"), expected: "a JSON value")),
        ]
        for (text, expected) in cases {
            #expect(reason(text)?.reason == expected, "\(text.debugDescription)")
        }
    }

    @Test func errorOffsets() {
        #expect(reason("[1,]")?.offset == 3)
        #expect(reason(#"{"a":1, "a":2}"#)?.offset == 8)
        #expect(reason("[1, 01]")?.offset == 4)
        #expect(reason("  \"ab")?.offset == 5)
        #expect(reason("[1,]")?.description == "unexpected ']', expected a JSON value at byte 3")
    }

    @Test func duplicateKeysInLargeObjects() {
        var text = "{" + (0..<100).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect((try? parse(text + "}")) != nil)
        text += ",\"k57\":0}"
        #expect(reason(text)?.reason == .duplicateKey("k57"))
        // Same key in different objects is fine.
        #expect((try? parse(#"[{"a":1},{"a":2},{"b":{"a":3}}]"#)) != nil)
    }

    @Test func invalidUTF8() {
        let quote: UInt8 = 0x22
        let cases: [(String, [UInt8])] = [
            ("0xFF", [0xFF]),
            ("0xFE", [0xFE]),
            ("lone continuation", [0x80]),
            ("overlong 2-byte NUL", [0xC0, 0x80]),
            ("overlong 2-byte slash", [0xC1, 0xBF]),
            ("overlong 3-byte", [0xE0, 0x80, 0xAF]),
            ("overlong 3-byte edge", [0xE0, 0x9F, 0xBF]),
            ("overlong 4-byte", [0xF0, 0x80, 0x80, 0xAF]),
            ("overlong 4-byte edge", [0xF0, 0x8F, 0xBF, 0xBF]),
            ("surrogate D800", [0xED, 0xA0, 0x80]),
            ("surrogate DFFF", [0xED, 0xBF, 0xBF]),
            ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
            ("5-byte form", [0xF8, 0x88, 0x80, 0x80, 0x80]),
            ("truncated 2-byte", [0xC3]),
            ("truncated 3-byte", [0xE2, 0x82]),
            ("truncated 4-byte", [0xF0, 0x9F, 0x98]),
            ("bad continuation", [0xC3, 0x28]),
            ("bad third byte", [0xE2, 0x82, 0x28]),
        ]
        for (name, sequence) in cases {
            let inString = [quote, UInt8(ascii: "a")] + sequence + [UInt8(ascii: "b"), quote]
            #expect(reason(inString) == JSONParseError(offset: 2, reason: .invalidUTF8), "\(name) in a string")
            #expect(reason([UInt8(ascii: "[")] + sequence + [UInt8(ascii: "]")])?.reason == .invalidUTF8, "\(name) outside")
            // Truncated at the very end of the input.
            #expect(reason([quote] + sequence) == JSONParseError(offset: 1, reason: .invalidUTF8), "\(name) at end")
        }
        #expect(reason([quote, 0xF0, 0x9F, 0x98]) == JSONParseError(offset: 1, reason: .invalidUTF8))
        // Valid boundaries pass.
        let valid: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sequence in valid {
            let value = try? JSONValue(parsing: [quote] + sequence + [quote])
            #expect(value == .string(String(decoding: sequence, as: UTF8.self)), "\(sequence)")
        }
        // A valid non-ASCII character outside a string is a syntax error, not a UTF-8 error.
        #expect(reason("é")?.reason == .unexpectedByte(0xC3, expected: "a JSON value"))
    }

    @Test func nestingLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try parse(ok).arrayValue != nil)
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(reason(tooDeep) == JSONParseError(offset: 512, reason: .tooDeep(limit: 512)))
        let objects = String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600)
        #expect(reason(objects)?.reason == .tooDeep(limit: 512))
        #expect(reason(Array(String(repeating: "[", count: 3) .utf8), maxDepth: 2)?.reason == .tooDeep(limit: 2))
        // Very deep input fails fast and cannot overflow the stack.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(reason(hostile)?.reason == .tooDeep(limit: 512))
        // A higher limit is honoured.
        let deep = String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000)
        #expect((try? JSONValue(parsing: deep, maxDepth: 2_000)) != nil)
    }

    @Test func parsesFromEveryInputType() throws {
        let text = #"{"a":[1,2.5,"x"]}"#
        let expected: JSONValue = ["a": [1, .double(2.5)!, "x"]]
        #expect(try JSONValue(parsing: text) == expected)
        #expect(try JSONValue(parsing: Array(text.utf8)) == expected)
        #expect(try JSONValue(parsing: Array(("xx" + text).utf8)[2...]) == expected)
        #expect(try JSONValue(parsing: ("xx" + text + "yy").dropFirst(2).dropLast(2)) == expected)
        let fromRaw = Array(text.utf8).withUnsafeBytes { raw in try? JSONValue(parsing: raw) }
        #expect(fromRaw == expected)
    }
}

extension JSONValue {
    fileprivate var serializedText: String { String(decoding: serialized(), as: UTF8.self) }
}
