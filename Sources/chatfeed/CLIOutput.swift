import JSONCodec
import WireProtocol

extension JSONValue {
    /// The compact JSON text, as the daemon writes it.
    var text: String { String(decoding: serialized(), as: UTF8.self) }
}
