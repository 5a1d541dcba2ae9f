/// A small JSON reader for configuration files: exact integers, ordered keys, and error
/// positions as line and column.
enum ConfigJSON: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([ConfigJSON])
    case object([(key: String, value: ConfigJSON)])

    struct ParseError: Error {
        var offset: Int
        var message: String
    }

    static func == (lhs: ConfigJSON, rhs: ConfigJSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let l), .bool(let r)): l == r
        case (.integer(let l), .integer(let r)): l == r
        case (.double(let l), .double(let r)): l == r
        case (.string(let l), .string(let r)): l == r
        case (.array(let l), .array(let r)): l == r
        case (.object(let l), .object(let r)): l.count == r.count && zip(l, r).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Text for messages: the value as written in JSON (strings quoted).
    var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func parse(_ bytes: [UInt8]) throws(ParseError) -> ConfigJSON {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.pos == bytes.count else { throw ParseError(offset: reader.pos, message: "unexpected data after the JSON value") }
        return value
    }

    /// Line and column (from 1) of a byte offset, counting characters, not bytes.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The offset of the first byte that starts no well-formed UTF-8 sequence, if any.
    static func firstInvalidUTF8(in bytes: [UInt8]) -> Int? {
        var pos = 0
        while pos < bytes.count {
            let lead = bytes[pos]
            if lead < 0x80 {
                pos += 1
                continue
            }
            var second: ClosedRange<UInt8> = 0x80...0xBF
            let length: Int
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xE1...0xEF: length = 3
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF4: length = 4; second = 0x80...0x8F
            case 0xF1...0xF3: length = 4
            default: return pos
            }
            guard pos + length <= bytes.count, second.contains(bytes[pos + 1]),
                  bytes[(pos + 2)..<(pos + length)].allSatisfy({ $0 & 0xC0 == 0x80 })
            else { return pos }
            pos += length
        }
        return nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var pos = 0

        mutating func skipWhitespace() {
            while pos < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[pos]) { pos += 1 }
        }

        func fail(_ message: String) -> ParseError { ParseError(offset: pos, message: message) }

        func unexpected(_ expected: String) -> ParseError {
            guard pos < bytes.count else { return fail("unexpected end of file, expected \(expected)") }
            let byte = bytes[pos]
            let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "character"
            return fail("unexpected \(shown), expected \(expected)")
        }

        mutating func value(depth: Int) throws(ParseError) -> ConfigJSON {
            guard depth < 64 else { throw fail("nesting too deep") }
            guard pos < bytes.count else { throw unexpected("a value") }
            switch bytes[pos] {
            case UInt8(ascii: "{"):
                pos += 1
                var members: [(key: String, value: ConfigJSON)] = []
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw unexpected("a string key") }
                    let key = try string()
                    skipWhitespace()
                    guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw unexpected("':'") }
                    pos += 1
                    skipWhitespace()
                    members.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    guard pos < bytes.count else { throw unexpected("',' or '}'") }
                    if bytes[pos] == UInt8(ascii: "}") {
                        pos += 1
                        return .object(members)
                    }
                    guard bytes[pos] == UInt8(ascii: ",") else { throw unexpected("',' or '}'") }
                    pos += 1
                }
            case UInt8(ascii: "["):
                pos += 1
                var elements: [ConfigJSON] = []
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    return .array(elements)
                }
                while true {
                    skipWhitespace()
                    elements.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard pos < bytes.count else { throw unexpected("',' or ']'") }
                    if bytes[pos] == UInt8(ascii: "]") {
                        pos += 1
                        return .array(elements)
                    }
                    guard bytes[pos] == UInt8(ascii: ",") else { throw unexpected("',' or ']'") }
                    pos += 1
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            default:
                throw unexpected("a value")
            }
        }

        mutating func literal(_ word: String) throws(ParseError) {
            let start = pos
            for byte in word.utf8 {
                guard pos < bytes.count, bytes[pos] == byte else {
                    pos = start
                    throw unexpected("a value")
                }
                pos += 1
            }
        }

        mutating func number() throws(ParseError) -> ConfigJSON {
            let start = pos
            func digits(_ reader: inout Reader) -> Int {
                let begin = reader.pos
                while reader.pos < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.pos]) { reader.pos += 1 }
                return reader.pos - begin
            }
            if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            let integerStart = pos
            let integerDigits = digits(&self)
            guard integerDigits > 0 else { throw ParseError(offset: start, message: "invalid number") }
            if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
                throw ParseError(offset: start, message: "invalid number: leading zero")
            }
            var isInteger = true
            if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
                pos += 1
                isInteger = false
                guard digits(&self) > 0 else { throw ParseError(offset: start, message: "invalid number") }
            }
            if pos < bytes.count, bytes[pos] | 0x20 == UInt8(ascii: "e") {
                pos += 1
                isInteger = false
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
                guard digits(&self) > 0 else { throw ParseError(offset: start, message: "invalid number") }
            }
            let text = String(decoding: bytes[start..<pos], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else {
                throw ParseError(offset: start, message: "number out of range")
            }
            return .double(double)
        }

        mutating func string() throws(ParseError) -> String {
            pos += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while pos < bytes.count {
                let byte = bytes[pos]
                switch byte {
                case UInt8(ascii: "\""):
                    pos += 1
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    let escapeStart = pos
                    pos += 1
                    guard pos < bytes.count else { throw unexpected("an escape") }
                    let escaped = bytes[pos]
                    pos += 1
                    let simple: [UInt8: UInt8] = [
                        0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09,
                    ]
                    if let replacement = simple[escaped] {
                        raw.append(replacement)
                    } else if escaped == UInt8(ascii: "u") {
                        var unit = try hex4(escapeStart)
                        if (0xD800..<0xDC00).contains(unit) {
                            guard pos + 1 < bytes.count, bytes[pos] == 0x5C, bytes[pos + 1] == UInt8(ascii: "u") else {
                                throw ParseError(offset: escapeStart, message: "unpaired surrogate in \\u escape")
                            }
                            pos += 2
                            let low = try hex4(escapeStart)
                            guard (0xDC00..<0xE000).contains(low) else {
                                throw ParseError(offset: escapeStart, message: "unpaired surrogate in \\u escape")
                            }
                            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(unit) {
                            throw ParseError(offset: escapeStart, message: "unpaired surrogate in \\u escape")
                        }
                        flush()
                        scalars.append(Unicode.Scalar(unit)!)
                    } else {
                        throw ParseError(offset: escapeStart, message: "invalid escape sequence")
                    }
                case 0..<0x20:
                    throw fail("unescaped control character in string")
                default:
                    raw.append(byte)
                    pos += 1
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4(_ escapeStart: Int) throws(ParseError) -> UInt32 {
            guard pos + 4 <= bytes.count, let unit = UInt32(String(decoding: bytes[pos..<pos + 4], as: UTF8.self), radix: 16),
                  bytes[pos..<pos + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
            else { throw ParseError(offset: escapeStart, message: "invalid \\u escape") }
            pos += 4
            return unit
        }
    }
}
