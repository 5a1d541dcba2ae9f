/// Why a text is not JSON, and the byte offset (from 0) where that was found.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The input ended inside a value (or was empty).
        case unexpectedEnd
        /// A byte that cannot start or continue a value here; `expected` says what could.
        case unexpectedByte(UInt8, expected: String)
        /// Bytes that are not well-formed UTF-8 (overlong, surrogate, truncated, out of range).
        case invalidUTF8
        /// A number that breaks the JSON grammar (leading zero, missing digits…).
        case invalidNumber
        /// A number too large to be represented as a finite double.
        case numberOutOfRange
        /// An unknown escape after a backslash, or a `\u` without four hex digits.
        case invalidEscape
        /// A `\u` escape of a UTF-16 surrogate without its pair.
        case loneSurrogate
        /// A raw control character (U+0000–U+001F) inside a string.
        case controlCharacterInString
        /// Arrays and objects nested deeper than the limit.
        case tooDeep(limit: Int)
        /// An object with the same key twice.
        case duplicateKey(String)
        /// Something after the value.
        case trailingData
    }

    public var offset: Int
    public var reason: Reason

    public init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedByte(let byte, let expected):
            let shown = (0x20..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
            what = "unexpected \(shown), expected \(expected)"
        case .invalidUTF8: what = "invalid UTF-8"
        case .invalidNumber: what = "invalid number"
        case .numberOutOfRange: what = "number out of range"
        case .invalidEscape: what = "invalid escape sequence"
        case .loneSurrogate: what = "unpaired UTF-16 surrogate in \\u escape"
        case .controlCharacterInString: what = "unescaped control character in string"
        case .tooDeep(let limit): what = "nesting deeper than \(limit) levels"
        case .duplicateKey(let key): what = "duplicate key \"\(key)\""
        case .trailingData: what = "unexpected data after the JSON value"
        }
        return "\(what) at byte \(offset)"
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
