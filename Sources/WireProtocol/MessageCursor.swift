import ChatModel

/// The opaque `cursor` / `nextCursor` strings of `messages.list`: a chat and a message position,
/// as base64url (no padding) of a version byte, `sentAt` (8 bytes, big-endian), the chat id's
/// length (1 byte) and bytes, the message id's bytes, and a 32-bit FNV-1a check of all that, so
/// that a truncated or altered cursor is refused rather than read as another position. Clients
/// never look inside.
public enum MessageCursor {
    private static let version: UInt8 = 1

    /// The cursor that continues `chat`'s listing after `position`.
    public static func encode(chat: String, after position: MessagePosition) -> String {
        var bytes: [UInt8] = [version]
        let sentAt = UInt64(bitPattern: position.sentAt)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: sentAt >> UInt64(shift))) }
        let chatBytes = Array(chat.utf8)
        bytes.append(UInt8(truncatingIfNeeded: chatBytes.count))
        bytes += chatBytes
        bytes += Array(position.id.utf8)
        let check = fnv1a(bytes[...])
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: check >> UInt32(shift))) }
        return Base64URL.encode(bytes)
    }

    /// The position a cursor of `chat` continues after.
    ///
    /// - Throws: `ChatError.invalidParams` naming `cursor` when the string is not a cursor that
    ///   `encode` made for `chat`.
    public static func decode(_ cursor: String, chat: String) throws(ChatError) -> MessagePosition {
        let invalid = ChatError.invalidParams(
            field: "cursor", reason: "is not a nextCursor that messages.list returned for chat '\(chat)'")
        guard let checked = Base64URL.decode(cursor), checked.count >= 14, checked[0] == version else { throw invalid }
        let bytes = checked.dropLast(4)
        let check = checked.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard fnv1a(bytes) == check else { throw invalid }
        var sentAt: UInt64 = 0
        for byte in bytes[1...8] { sentAt = sentAt << 8 | UInt64(byte) }
        let chatLength = Int(bytes[9])
        let chatEnd = 10 + chatLength
        guard bytes.count > chatEnd, bytes[10..<chatEnd].elementsEqual(chat.utf8),
              let id = String(validating: bytes[chatEnd...], as: UTF8.self)
        else { throw invalid }
        return MessagePosition(sentAt: Int64(bitPattern: sentAt), id: id)
    }

    private static func fnv1a(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(2_166_136_261 as UInt32) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }
}

/// Base64 with the URL-safe alphabet (RFC 4648 §5), without padding.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var word: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { word |= UInt32(byte) << (16 - 8 * UInt32(offset)) }
            for position in 0...chunk.count {
                output.append(alphabet[Int((word >> (18 - 6 * UInt32(position))) & 63)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes, or nil for a character outside the alphabet, a length no encoding has, or
    /// non-zero padding bits (so that every cursor has exactly one spelling).
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count * 3 / 4)
        var index = 0
        while index < characters.count {
            let chunk = characters[index..<min(index + 4, characters.count)]
            var word: UInt32 = 0
            for (offset, character) in chunk.enumerated() {
                let value = values[Int(character)]
                guard value != 0xFF else { return nil }
                word |= UInt32(value) << (18 - 6 * UInt32(offset))
            }
            let count = chunk.count - 1
            for position in 0..<count { bytes.append(UInt8(truncatingIfNeeded: word >> (16 - 8 * UInt32(position)))) }
            // Bits beyond the bytes decoded must be zero.
            if count < 3, word & ((1 << (24 - 8 * UInt32(count))) - 1) != 0 { return nil }
            index += 4
        }
        return bytes
    }
}
