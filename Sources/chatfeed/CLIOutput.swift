import Foundation

/// Writes the JSON that `write` appends (one of WireProtocol's encoders, so the bytes are the
/// daemon's) and a newline to stdout.
func outputJSON(_ write: (inout [UInt8]) -> Void) {
    var bytes: [UInt8] = []
    write(&bytes)
    bytes.append(UInt8(ascii: "\n"))
    FileHandle.standardOutput.write(Data(bytes))
}
