extension JSONValue {
    /// Appends the compact JSON text of the value to `output`.
    public func serialize(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(true): output.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        case .bool(false): output.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        case .number(let number): JSONOutput.appendNumber(number, to: &output)
        case .string(let string): JSONOutput.appendString(string, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.serialize(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONOutput.appendString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.serialize(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// The compact JSON text of the value.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        serialize(into: &output)
        return output
    }
}

/// Low-level JSON output, for encoders that write without building a `JSONValue`.
public enum JSONOutput {
    /// Appends `string` as a JSON string literal, escaping `"`, `\` and control characters.
    public static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: output.append(0x22)
                case 0x5C: output.append(0x5C)
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    let hexDigits: StaticString = "0123456789abcdef"
                    output.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30])
                    output.append(hexDigits.utf8Start[Int(byte >> 4)])
                    output.append(hexDigits.utf8Start[Int(byte & 0xF)])
                }
            }
            if runStart < utf8.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends the decimal digits of `value`, exactly.
    public static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value >= 0, value < 10 {
            output.append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            while magnitude > 0 {
                start -= 1
                digits[start] = 0x30 &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Appends a number: integers exactly, parsed numbers as they were written, other doubles in
    /// the shortest text that reads back equal.
    public static func appendNumber(_ number: JSONNumber, to output: inout [UInt8]) {
        if let literal = number.literal {
            output.append(contentsOf: literal.utf8)
            return
        }
        switch number.storage {
        case .integer(let value): appendInteger(value, to: &output)
        case .double(let value): output.append(contentsOf: value.description.utf8)
        }
    }

    /// Appends raw bytes that the caller knows to be valid JSON text, e.g. a cached serialization.
    public static func appendRaw(_ bytes: some Sequence<UInt8>, to output: inout [UInt8]) {
        output.append(contentsOf: bytes)
    }
}
