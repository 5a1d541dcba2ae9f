import JSONCodec

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }

    /// The bytes that `write` appends (one of the wire encoders).
    static func written(_ write: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        write(&bytes)
        return bytes
    }
}

/// The JSON value of what `write` appends, read back by the parser.
func parsed(_ write: (inout [UInt8]) -> Void) throws -> JSONValue {
    try JSONValue(parsing: [UInt8].written(write))
}
