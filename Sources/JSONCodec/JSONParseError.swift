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

    /// What is wrong, without the position.
    public var message: String {
        switch reason {
        case .unexpectedEnd: "unexpected end of input"
        case .unexpectedByte(let byte, let expected): "unexpected \(shown(byte)), expected \(expected)"
        case .invalidUTF8: "invalid UTF-8"
        case .invalidNumber: "invalid number"
        case .invalidEscape: "invalid escape sequence"
        case .loneSurrogate: "unpaired UTF-16 surrogate in \\u escape"
        case .controlCharacterInString: "unescaped control character in string"
        case .tooDeep(let limit): "nesting deeper than \(limit) levels"
        case .duplicateKey(let key): "duplicate key \"\(key)\""
        case .trailingData: "unexpected data after the JSON value"
        }
    }

    public var description: String { "\(message) at byte \(offset)" }

    /// The line and column (from 1) of the error in `text`, the bytes that were parsed; columns
    /// count characters (Unicode scalars), not bytes.
    public func lineAndColumn(in text: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in text.prefix(offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}

private func shown(_ byte: UInt8) -> String {
    if (0x20..<0x7F).contains(byte) { return "'\(Character(Unicode.Scalar(byte)))'" }
    let digits = Array("0123456789ABCDEF")
    return "byte 0x" + String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
