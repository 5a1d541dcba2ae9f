extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}
