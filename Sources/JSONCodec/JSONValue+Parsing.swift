extension JSONValue {
    /// Parses one JSON text (RFC 8259, strict): invalid UTF-8, duplicate keys and nesting deeper
    /// than `maxDepth` are errors.
    public init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        var parser = JSONParser(bytes.bindMemory(to: UInt8.self), maxDepth: maxDepth)
        self = try parser.parseDocument()
    }

    /// Parses one JSON text from bytes (see `init(parsing:maxDepth:)`).
    public init(parsing bytes: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try JSONValue(parsing: raw, maxDepth: maxDepth) }
        }
        self = try result.get()
    }

    /// Parses one JSON text from bytes (see `init(parsing:maxDepth:)`).
    public init(parsing bytes: ArraySlice<UInt8>, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try JSONValue(parsing: raw, maxDepth: maxDepth) }
        }
        self = try result.get()
    }

    /// Parses one JSON text (see `init(parsing:maxDepth:)`).
    public init(parsing text: Substring, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        try self.init(parsing: String(text), maxDepth: maxDepth)
    }

    /// Parses one JSON text (see `init(parsing:maxDepth:)`).
    public init(parsing text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in
                try JSONValue(parsing: UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }
        self = try result.get()
    }
}

/// An iterative parser (explicit stacks, no recursion), so depth costs heap, never call stack.
struct JSONParser {
    fileprivate let bytes: UnsafeBufferPointer<UInt8>
    fileprivate let end: Int
    private let maxDepth: Int
    fileprivate var pos = 0
    private var scratch: [UInt8] = []

    private struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.end = bytes.count
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        var values: [JSONValue] = []
        var keys: [String] = []
        var keyOffsets: [Int] = []
        var frames: [Frame] = []
        values.reserveCapacity(16)
        keys.reserveCapacity(16)
        keyOffsets.reserveCapacity(16)
        frames.reserveCapacity(8)
        var value: JSONValue
        skipWhitespace()
        parsing: while true {
            guard pos < end else { throw error(.unexpectedEnd) }
            switch bytes[pos] {
            case UInt8(ascii: "{"):
                guard frames.count < maxDepth else { throw error(.tooDeep(limit: maxDepth)) }
                pos += 1
                skipWhitespace()
                if pos < end, bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    value = .object(JSONObject())
                } else {
                    frames.append(Frame(isObject: true, valueStart: values.count, keyStart: keys.count))
                    try parseKey(into: &keys, offsets: &keyOffsets)
                    continue parsing
                }
            case UInt8(ascii: "["):
                guard frames.count < maxDepth else { throw error(.tooDeep(limit: maxDepth)) }
                pos += 1
                skipWhitespace()
                if pos < end, bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    value = .array([])
                } else {
                    frames.append(Frame(isObject: false, valueStart: values.count, keyStart: keys.count))
                    continue parsing
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            default:
                throw unexpected("a JSON value")
            }

            // A complete value: attach it to the enclosing containers, closing those that end here.
            while true {
                guard let frame = frames.last else {
                    skipWhitespace()
                    guard pos == end else { throw error(.trailingData) }
                    return value
                }
                values.append(value)
                skipWhitespace()
                guard pos < end else { throw error(.unexpectedEnd) }
                let byte = bytes[pos]
                if byte == UInt8(ascii: ",") {
                    pos += 1
                    skipWhitespace()
                    if frame.isObject { try parseKey(into: &keys, offsets: &keyOffsets) }
                    continue parsing
                }
                frames.removeLast()
                if frame.isObject {
                    guard byte == UInt8(ascii: "}") else { throw unexpected("',' or '}'") }
                    pos += 1
                    value = .object(try makeObject(
                        keys: &keys, offsets: &keyOffsets, keyStart: frame.keyStart,
                        values: &values, valueStart: frame.valueStart))
                } else {
                    guard byte == UInt8(ascii: "]") else { throw unexpected("',' or ']'") }
                    pos += 1
                    value = .array(Array(values[frame.valueStart...]))
                    values.removeSubrange(frame.valueStart...)
                }
            }
        }
    }

    // MARK: - Objects

    /// Reads `"key"` and `:`, leaving `pos` at the start of the member's value.
    private mutating func parseKey(into keys: inout [String], offsets: inout [Int]) throws(JSONParseError) {
        guard pos < end else { throw error(.unexpectedEnd) }
        guard bytes[pos] == UInt8(ascii: "\"") else { throw unexpected("a string key") }
        offsets.append(pos)
        keys.append(try parseString())
        skipWhitespace()
        guard pos < end else { throw error(.unexpectedEnd) }
        guard bytes[pos] == UInt8(ascii: ":") else { throw unexpected("':'") }
        pos += 1
        skipWhitespace()
    }

    private func makeObject(
        keys: inout [String], offsets: inout [Int], keyStart: Int,
        values: inout [JSONValue], valueStart: Int
    ) throws(JSONParseError) -> JSONObject {
        let count = keys.count - keyStart
        if count > 1 {
            if count <= 16 {
                for i in (keyStart + 1)..<keys.count {
                    for j in keyStart..<i where keys[i] == keys[j] {
                        throw JSONParseError(offset: offsets[i], reason: .duplicateKey(keys[i]))
                    }
                }
            } else {
                var seen = Set<String>(minimumCapacity: count)
                for i in keyStart..<keys.count where !seen.insert(keys[i]).inserted {
                    throw JSONParseError(offset: offsets[i], reason: .duplicateKey(keys[i]))
                }
            }
        }
        var members: [JSONObject.Element] = []
        members.reserveCapacity(count)
        for i in 0..<count {
            members.append((key: keys[keyStart + i], value: values[valueStart + i]))
        }
        keys.removeSubrange(keyStart...)
        offsets.removeSubrange(keyStart...)
        values.removeSubrange(valueStart...)
        return JSONObject(members)
    }

    // MARK: - Scalars

    fileprivate mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = pos
        let count = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for i in 0..<count {
            guard pos < end else { throw error(.unexpectedEnd) }
            guard bytes[pos] == text[i] else {
                throw JSONParseError(offset: i == 0 ? start : pos, reason: .unexpectedByte(bytes[pos], expected: "'\(literal)'"))
            }
            pos += 1
        }
    }

    fileprivate mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = pos
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        let integerStart = pos
        guard pos < end, isDigit(bytes[pos]) else {
            throw JSONParseError(offset: start, reason: .invalidNumber)
        }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < end, isDigit(bytes[pos]) { throw JSONParseError(offset: start, reason: .invalidNumber) }
        } else {
            while pos < end, isDigit(bytes[pos]) { pos += 1 }
        }
        let integerEnd = pos
        var isInteger = true
        if pos < end, bytes[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < end, isDigit(bytes[pos]) else { throw JSONParseError(offset: start, reason: .invalidNumber) }
            while pos < end, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < end, bytes[pos] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            pos += 1
            if pos < end, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < end, isDigit(bytes[pos]) else { throw JSONParseError(offset: start, reason: .invalidNumber) }
            while pos < end, isDigit(bytes[pos]) { pos += 1 }
        }
        let negative = integerStart != start
        if isInteger, let value = integerValue(integerStart..<integerEnd, negative: negative) {
            // `-0` is echoed as sent (a request id), and equals 0.
            return value == 0 && negative ? JSONNumber(parsedInteger: 0, literal: "-0") : JSONNumber(value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        // Beyond a double's range (`1e400`) is still a JSON number: it keeps its text and reads
        // as an infinite double, which no integer or finite-number field accepts.
        let double = Double(text) ?? (negative ? -.infinity : .infinity)
        return JSONNumber(parsed: double, literal: text)
    }

    /// The digits as an Int64, or nil when they do not fit.
    private func integerValue(_ digits: Range<Int>, negative: Bool) -> Int64? {
        // Accumulated as a negative number, whose range includes Int64.min.
        var value: Int64 = 0
        if digits.count <= 18 {
            for i in digits { value = value &* 10 &- Int64(bytes[i] &- 0x30) }
        } else {
            for i in digits {
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = times10.subtractingReportingOverflow(Int64(bytes[i] &- 0x30))
                if overflow1 || overflow2 { return nil }
                value = next
            }
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    // MARK: - Strings

    /// Reads a string starting at its opening quote.
    fileprivate mutating func parseString() throws(JSONParseError) -> String {
        pos += 1
        let start = pos
        while pos < end {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
                pos += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw error(.controlCharacterInString) }
            if byte < 0x80 { pos += 1 } else { try skipUTF8Sequence() }
        }
        throw error(.unexpectedEnd)
    }

    /// The slow path of `parseString`: `pos` is at the first backslash.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
        while pos < end {
            let byte = bytes[pos]
            switch byte {
            case UInt8(ascii: "\""):
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw error(.controlCharacterInString)
            case 0x20..<0x80:
                scratch.append(byte)
                pos += 1
            default:
                let sequenceStart = pos
                try skipUTF8Sequence()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[sequenceStart..<pos]))
            }
        }
        throw error(.unexpectedEnd)
    }

    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = pos
        pos += 1
        guard pos < end else { throw error(.unexpectedEnd) }
        let byte = bytes[pos]
        pos += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: escapeStart)
            var scalar = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                guard pos + 1 < end, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(offset: escapeStart, reason: .loneSurrogate)
                }
                let lowStart = pos
                pos += 2
                let low = try parseHex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(offset: escapeStart, reason: .loneSurrogate)
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw JSONParseError(offset: escapeStart, reason: .loneSurrogate)
            }
            appendUTF8(scalar)
        default:
            throw JSONParseError(offset: escapeStart, reason: .invalidEscape)
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard pos < end else { throw error(.unexpectedEnd) }
            let byte = bytes[pos]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(offset: escapeStart, reason: .invalidEscape)
            }
            value = value << 4 | UInt16(digit)
            pos += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Skips one well-formed multi-byte UTF-8 sequence (Unicode Table 3-7) starting at `pos`.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = bytes[pos]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xE1...0xEF: length = 3
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        case 0xF1...0xF3: length = 4
        default: throw error(.invalidUTF8)
        }
        guard pos + length <= end, secondRange.contains(bytes[pos + 1]) else { throw error(.invalidUTF8) }
        for i in 2..<length where bytes[pos + i] & 0xC0 != 0x80 {
            throw error(.invalidUTF8)
        }
        pos += length
    }

    // MARK: - Helpers

    fileprivate mutating func skipWhitespace() {
        while pos < end {
            switch bytes[pos] {
            case 0x20, 0x0A, 0x0D, 0x09: pos += 1
            default: return
            }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    private func error(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(offset: pos, reason: reason)
    }

    /// The error for the byte at `pos`: invalid UTF-8 when it starts no valid sequence.
    private mutating func unexpected(_ expected: String) -> JSONParseError {
        let byte = bytes[pos]
        if byte >= 0x80 {
            let saved = pos
            defer { pos = saved }
            do { try skipUTF8Sequence() } catch { return error }
        }
        return error(.unexpectedByte(byte, expected: expected))
    }
}

extension JSONValue {
    /// The `id` member of a top-level object, read from the start of a text that may be broken
    /// further on or cut short: a string, a number or null whose member precedes the damage.
    /// Nil when no such id can be read.
    public static func readableID(in bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var parser = JSONParser(bytes.bindMemory(to: UInt8.self), maxDepth: 0)
        return parser.readTopLevelID()
    }
}

extension JSONParser {
    fileprivate mutating func readTopLevelID() -> JSONValue? {
        pos = 0
        skipWhitespace()
        guard pos < end, bytes[pos] == UInt8(ascii: "{") else { return nil }
        pos += 1
        while true {
            skipWhitespace()
            guard pos < end, bytes[pos] == UInt8(ascii: "\""), let key = try? parseString() else { return nil }
            skipWhitespace()
            guard pos < end, bytes[pos] == UInt8(ascii: ":") else { return nil }
            pos += 1
            skipWhitespace()
            guard pos < end else { return nil }
            if key == "id" {
                let value: JSONValue
                switch bytes[pos] {
                case UInt8(ascii: "\""):
                    guard let string = try? parseString() else { return nil }
                    value = .string(string)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let number = try? parseNumber() else { return nil }
                    value = .number(number)
                case UInt8(ascii: "n"):
                    guard (try? expectLiteral("null")) != nil else { return nil }
                    value = .null
                default:
                    return nil
                }
                skipWhitespace()
                guard pos < end, bytes[pos] == UInt8(ascii: ",") || bytes[pos] == UInt8(ascii: "}") else { return nil }
                return value
            }
            guard skipMemberValue() else { return nil }
            pos += 1
        }
    }

    /// Skips a member's value by its brackets and strings, up to the `,` that ends it; false at
    /// the end of the object or of the input.
    private mutating func skipMemberValue() -> Bool {
        var depth = 0
        while pos < end {
            switch bytes[pos] {
            case UInt8(ascii: "\""):
                pos += 1
                while pos < end, bytes[pos] != UInt8(ascii: "\"") {
                    pos += bytes[pos] == UInt8(ascii: "\\") ? 2 : 1
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return false }
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 { return true }
            default:
                break
            }
            pos += 1
        }
        return false
    }
}
